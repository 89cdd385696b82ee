package checkout

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Counter is implemented by stores that can count a scope's sessions in one status (the
// dashboard overview). It is separate from Store so that stores for other uses need not.
type Counter interface {
	CountSessions(ctx context.Context, scope core.Scope, status Status) (int64, error)
}

// CountOpen returns how many of the scope's sessions are open now: due sessions are expired
// first (each with its event), as List does, so the figure matches what a list shows.
func (svc *Service) CountOpen(ctx context.Context, scope core.Scope) (int64, error) {
	c, ok := svc.store.(Counter)
	if !ok {
		return 0, errors.New("checkout: the session store cannot count")
	}
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return 0, err
	}
	if _, err := svc.ProcessDue(ctx, &scope, now); err != nil {
		return 0, err
	}
	return c.CountSessions(ctx, scope, StatusOpen)
}
