package identity

import "context"

// SignOut ends the session at once: its cookie stops working, even a kept copy of it.
func (d *Dashboard) SignOut(ctx context.Context, s *DashboardSession) error {
	if s == nil {
		return nil
	}
	return d.store.DeleteSession(ctx, s.TokenHash)
}
