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
	// RecordLoginFailure remembers one failed sign-in of the e-mail (lower-cased by the
	// caller) from the client address.
	RecordLoginFailure(ctx context.Context, email, clientIP string, at time.Time) error
	// LoginFailures counts the failures recorded after `since` of the (e-mail, address) pair,
	// of the address whatever the e-mail, and of the e-mail whatever the address.
	LoginFailures(ctx context.Context, email, clientIP string, since time.Time) (LoginFailureCounts, error)
	// ClearLoginFailures forgets the failures of the e-mail from the client address (after a
	// successful sign-in from it); those of other addresses stay.
	ClearLoginFailures(ctx context.Context, email, clientIP string) error
	// PurgeDashboard deletes sessions that expired by now or were last seen before idleBefore,
	// and sign-in failures older than failuresBefore.
	PurgeDashboard(ctx context.Context, now, idleBefore, failuresBefore time.Time) (int64, error)
}

// LoginFailureCounts is what LoginFailures reports; times are zero when their count is 0.
type LoginFailureCounts struct {
	Pair, IP, Email      int
	PairOldest, IPOldest time.Time // the oldest failure of the pair, of the address
	EmailLatest          time.Time // the latest failure of the e-mail, from any address
}
