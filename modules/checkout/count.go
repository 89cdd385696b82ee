package checkout

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Counter is implemented by stores that can count a scope's sessions in one status (the
// dashboard overview). It is separate from Store so that stores for other uses need not.
type Counter interface {
	// CountOpen counts the scope's sessions open at now: stored open and not due by now
	// (Session.IsDue).
	CountOpen(ctx context.Context, scope core.Scope, now time.Time) (int64, error)
}

// CountOpen returns how many of the scope's sessions are open now. It writes nothing: a due
// session that no sweep has expired yet is not counted, as a list does not show it as open.
func (svc *Service) CountOpen(ctx context.Context, scope core.Scope) (int64, error) {
	c, ok := svc.store.(Counter)
	if !ok {
		return 0, errors.New("checkout: the session store cannot count")
	}
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return 0, err
	}
	return c.CountOpen(ctx, scope, now)
}
