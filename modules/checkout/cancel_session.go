package checkout

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Cancel moves an open session to canceled with cancellation_reason customer_canceled (D6:
// the buyer pressed "Cancel" on the hosted page) and writes checkout.session.canceled with it.
// The answers mirror Expire: a complete session answers ErrSessionAlreadyCompleted, an expired
// or canceled one ErrSessionExpired, and an open session whose lifetime has run out is expired
// on the way (its one event stamped at its expires_at) and answers ErrSessionExpired.
func (svc *Service) Cancel(ctx context.Context, scope core.Scope, id string) (*Session, error) {
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	lapsed := false
	s, err := svc.store.Update(ctx, scope, id, func(s *Session) ([]core.Event, error) {
		if s.IsDue(now) {
			lapsed = true
			return svc.expiredEvent(s, expiryTime(s))
		}
		if err := s.Cancel(now); err != nil {
			return nil, err
		}
		return []core.Event{core.NewEvent(EventCanceled, scope, now, SessionEvent{Session: s})}, nil
	})
	if err != nil {
		return nil, err
	}
	if lapsed {
		return nil, ErrSessionExpired
	}
	return s, nil
}
