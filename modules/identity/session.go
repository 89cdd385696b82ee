package identity

import (
	"context"
	"errors"
)

// Session returns the live session of a cookie token and marks it used: 401 session_required
// when the token is unknown, signed out, idle for SessionIdle or older than SessionMaxAge.
func (d *Dashboard) Session(ctx context.Context, token string) (*DashboardSession, error) {
	if token == "" || len(token) > 200 {
		return nil, ErrSessionRequired
	}
	hash := HashSecret(token)
	s, err := d.store.SessionByHash(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrSessionRequired
	}
	if err != nil {
		return nil, err
	}
	now := d.clock.Now()
	if !now.Before(s.ExpiresAt) || !now.Before(s.LastSeen.Add(SessionIdle)) {
		// Best effort: an ended session is refused whether or not its row goes now.
		_ = d.store.DeleteSession(ctx, hash)
		return nil, ErrSessionRequired
	}
	if now.Sub(s.LastSeen) >= sessionTouchGranularity {
		_ = d.store.TouchSession(ctx, s.MerchantID, hash, now)
	}
	return s, nil
}
