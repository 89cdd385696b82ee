package checkout

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Get returns one session of the scope. An open session whose lifetime has run out is expired
// on the way (lazy expiry, D6), in the same transaction as its event; the row lock and the
// status check under it make that happen once whoever gets there first.
func (svc *Service) Get(ctx context.Context, scope core.Scope, id string) (*Session, error) {
	s, err := svc.store.Get(ctx, scope, id)
	if err != nil {
		return nil, sessionNotFound(err, id)
	}
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	if !s.IsDue(now) {
		return s, nil
	}
	s, err = svc.expireIfDue(ctx, scope, id, now)
	return s, sessionNotFound(err, id)
}

// expireIfDue locks the session in a unit of work and expires it when it is still due;
// otherwise it returns the session as another transaction left it.
func (svc *Service) expireIfDue(ctx context.Context, scope core.Scope, id string, now time.Time) (*Session, error) {
	var out *Session
	err := svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out = nil // Do may run this again
		s, err := tx.Sessions().Lock(ctx, scope, id)
		if err != nil {
			return err
		}
		if s.IsDue(now) {
			if err := expire(ctx, tx, s, expiryTime(s)); err != nil {
				return err
			}
		}
		out = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List returns one page of the scope's sessions, newest first, optionally filtered by status
// ("" = all). It writes nothing: a session whose lifetime has run out but that no sweep has
// expired yet is shown, and filtered, as expired, the state a Get would show; the sweep (or
// a Get of it) writes the expiry and its event, dated when the session expired.
func (svc *Service) List(ctx context.Context, scope core.Scope, q core.ListQuery, status string) (core.Page[*Session], error) {
	var none core.Page[*Session]
	q, err := q.Normalize()
	if err != nil {
		return none, err
	}
	st := Status(status)
	if status != "" && !st.Valid() {
		return none, core.InvalidField("status", "status must be one of open, complete, expired, canceled.")
	}
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return none, err
	}
	page, err := svc.store.List(ctx, scope, q, st, now)
	if err != nil {
		return none, unknownCursor(err, q)
	}
	for i, s := range page.Items {
		page.Items[i] = s.asOf(now)
	}
	return page, nil
}
