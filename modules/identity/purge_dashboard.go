package identity

import "context"

// Purge deletes ended sessions and sign-in failures that no longer count (the sweep).
func (d *Dashboard) Purge(ctx context.Context) (int64, error) {
	now := d.clock.Now()
	return d.store.PurgeDashboard(ctx, now, now.Add(-SessionIdle), now.Add(-d.throttle.Window))
}
