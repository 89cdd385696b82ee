package checkout

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// Expire ends an open session early (POST /v1/checkout/sessions/{id}/expire): the session
// becomes expired and checkout.session.expired is written with it. An open session whose
// lifetime already ran out is expired the same way (stamped at its expires_at). A complete
// session answers ErrSessionAlreadyCompleted, an expired or canceled one ErrSessionExpired.
func (svc *Service) Expire(ctx context.Context, scope core.Scope, id string) (*Session, error) {
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	return svc.store.Update(ctx, scope, id, func(s *Session) ([]core.Event, error) {
		at := now
		if s.IsDue(now) {
			at = expiryTime(s)
		}
		return svc.expiredEvent(s, at)
	})
}
