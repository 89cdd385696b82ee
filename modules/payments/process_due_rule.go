package payments

import "time"

// DuePrecision is the precision at which storage keeps due times (PostgreSQL timestamps:
// microseconds). The sweep compares due times with its horizon at this precision, so that the
// rule here and storage's projection of it agree on every instant.
const DuePrecision = time.Microsecond

// DueAt is the one definition of when the payments sweep next has work on a payment:
//
//   - processing: its settlement, at SettlesAt (none when the processor gave no time);
//   - succeeded or partially refunded, with a dispute announced (DisputeOpensAt) and none
//     opened yet (DisputeID empty): the dispute, at DisputeOpensAt;
//   - otherwise none (nil): failed, refunded and disputed payments have no due work, and a
//     payment whose dispute was opened (and perhaps won) never gets a second one.
//
// Storage keeps a projection of this rule (payments.due_at in PostgreSQL) to find due work
// with an index; a test over every state checks that the two agree.
func (r *Record) DueAt() *time.Time {
	switch r.Payment.Status() {
	case StatusProcessing:
		return r.SettlesAt()
	case StatusSucceeded, StatusPartiallyRefunded:
		if r.DisputeID() == "" {
			return r.DisputeOpensAt
		}
	case StatusFailed, StatusRefunded, StatusDisputed: // final for the sweep: no due work
	}
	return nil
}

// IsDue reports whether the payment has work due at or before until (compared at
// DuePrecision).
func (r *Record) IsDue(until time.Time) bool {
	at := r.DueAt()
	return at != nil && !at.Truncate(DuePrecision).After(until.Truncate(DuePrecision))
}
