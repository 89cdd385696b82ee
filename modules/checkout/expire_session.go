package checkout

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Expire ends an open session early (POST /v1/checkout/sessions/{id}/expire): the session
// becomes expired and checkout.session.expired is written with it, in one unit of work. A complete session answers
// ErrSessionAlreadyCompleted, an expired or canceled one ErrSessionExpired, one with a charge
// in flight payments.ErrChargeInProgress (without waiting for it). A session whose
// lifetime already ran out is expired, whether or not anyone noticed yet (D6: a read would
// show it expired): if nobody did, its expiry is recorded now, stamped at its expires_at with
// its one event, and the call answers ErrSessionExpired like any later one, so the answer does
// not depend on whether a read or the sweep came first.
func (svc *Service) Expire(ctx context.Context, scope core.Scope, id string) (*Session, error) {
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	var out *Session
	lapsed := false
	err = svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out, lapsed = nil, false // Do may run this again
		s, err := tx.Sessions().Lock(ctx, scope, id)
		if err != nil {
			return err
		}
		if s.IsDue(now) {
			lapsed = true
			return expire(ctx, tx, s, expiryTime(s))
		}
		if err := expire(ctx, tx, s, now); err != nil {
			return err
		}
		out = s
		return nil
	})
	if err != nil {
		return nil, sessionNotFound(err, id)
	}
	if lapsed {
		return nil, ErrSessionExpired
	}
	return out, nil
}
