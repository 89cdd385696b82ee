package identity

import (
	"context"
	"time"
)

// DashboardStore keeps what dashboard sign-in needs: users looked up by e-mail across
// merchants, server-side sessions (only the SHA-256 of their token) and the record of failed
// sign-ins that throttling counts. adapters/postgres implements it.
type DashboardStore interface {
	// UsersByEmail returns the dashboard users with that e-mail (case-insensitive) in any
	// merchant, oldest first, at most limit of them.
	UsersByEmail(ctx context.Context, email string, limit int) ([]*User, error)
	// CreateSession inserts a new session.
	CreateSession(ctx context.Context, s *SessionRecord) error
	// SessionByHash returns the live session whose token hashes to hash with its user and
	// merchant, or ErrNotFound. It does not judge expiry: the use case does.
	SessionByHash(ctx context.Context, hash []byte) (*DashboardSession, error)
	// TouchSession sets the session's last_seen to at when it is older (the use case calls it
	// at most once per sessionTouchGranularity), for a session of merchantID only.
	TouchSession(ctx context.Context, merchantID string, hash []byte, at time.Time) error
	// DeleteSession removes the session (no error when it does not exist).
	DeleteSession(ctx context.Context, hash []byte) error
	// RecordLoginFailure remembers one failed sign-in for the e-mail (lower-cased by the
	// caller) and for the client address.
	RecordLoginFailure(ctx context.Context, email, clientIP string, at time.Time) error
	// LoginFailures counts the failures recorded since `since` for the e-mail and for the
	// client address, each with the time of its oldest failure in that window.
	LoginFailures(ctx context.Context, email, clientIP string, since time.Time) (LoginFailureCounts, error)
	// ClearLoginFailures forgets the e-mail's failures (after a successful sign-in).
	ClearLoginFailures(ctx context.Context, email string) error
	// PurgeDashboard deletes sessions that expired by now or were last seen before idleBefore,
	// and sign-in failures older than failuresBefore.
	PurgeDashboard(ctx context.Context, now, idleBefore, failuresBefore time.Time) (int64, error)
}

// LoginFailureCounts is what LoginFailures reports.
type LoginFailureCounts struct {
	Email, IP             int
	EmailOldest, IPOldest time.Time // zero when the count is 0
}
