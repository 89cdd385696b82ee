package core

import "time"

// ListQuery is a cursor page request (D8): newest first, limit 1–100 (default 10), and at most
// one of StartingAfter / EndingBefore, each an id of the same resource in the same scope.
type ListQuery struct {
	Limit         int
	StartingAfter string
	EndingBefore  string
}

// DefaultListLimit and MaxListLimit bound ListQuery.Limit.
const (
	DefaultListLimit = 10
	MaxListLimit     = 100
)

// Normalize applies the default limit and checks the bounds and cursors.
func (q ListQuery) Normalize() (ListQuery, error) {
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	if q.Limit < 1 || q.Limit > MaxListLimit {
		return q, InvalidField("limit", "limit must be between 1 and 100.")
	}
	if q.StartingAfter != "" && q.EndingBefore != "" {
		return q, InvalidField("ending_before", "Pass at most one of starting_after and ending_before.")
	}
	return q, nil
}

// UnknownCursor is the documented answer to a cursor that names no object of the list (D8): 400
// starting_after_invalid or ending_before_invalid, whichever cursor q carries. A module builds
// it from its store's sentinel for an unknown cursor.
func (q ListQuery) UnknownCursor() *Error {
	param, cursor := "starting_after", q.StartingAfter
	if q.EndingBefore != "" {
		param, cursor = "ending_before", q.EndingBefore
	}
	return InvalidField(param, "No such object in this list: '%s'.", cursor)
}

// Page is one page of a list, newest first.
type Page[T any] struct {
	Items   []T
	HasMore bool
}

// Caller is who a request acts for, as authentication established it.
type Caller struct {
	Scope     Scope
	Onboarded bool // false: live requests that move money get merchant_not_ready (D1)
	KeyID     string
	// TestClock is the frozen time of the scope's sandbox clock as read with the key (nil: real
	// time, and always nil for live); see WithClockReading.
	TestClock *time.Time
}
