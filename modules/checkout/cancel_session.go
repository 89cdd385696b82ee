package checkout

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Cancel moves an open session to canceled with cancellation_reason customer_canceled (D6:
// the buyer pressed "Cancel" on the hosted page) and writes checkout.session.canceled with it, in one unit of work.
// The answers mirror Expire: a complete session answers ErrSessionAlreadyCompleted, an expired
// or canceled one ErrSessionExpired, and an open session whose lifetime has run out is expired
// on the way (its one event stamped at its expires_at) and answers ErrSessionExpired.
func (svc *Service) Cancel(ctx context.Context, scope core.Scope, id string) (*Session, error) {
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
		if err := s.Cancel(now); err != nil {
			return err
		}
		abandoned := s.abandonPending(now) // a charge left waiting for 3-D Secure ends with the session
		if err := tx.Sessions().Save(ctx, s); err != nil {
			return err
		}
		out = s
		if abandoned != nil {
			if err := tx.Outbox().Add(ctx, *abandoned); err != nil {
				return err
			}
		}
		return tx.Outbox().Add(ctx, core.NewEvent(EventCanceled, scope, now, SessionEvent{Session: s}))
	})
	if err != nil {
		return nil, sessionNotFound(err, id)
	}
	if lapsed {
		return nil, ErrSessionExpired
	}
	return out, nil
}
