package checkout

import (
	"context"
	"errors"
)

// CancelByBuyer cancels the session for the holder of its client secret (D6: the buyer
// pressed "Cancel" on the hosted page): the session becomes canceled with cancellation_reason
// customer_canceled and checkout.session.canceled is written with it; the caller sends the
// browser to cancel_url. The secret checks are BuyerView's: a wrong secret, or a session that
// is not open (complete, expired, canceled: its secret is no longer valid), answers
// ErrSessionExpired, so a second cancel is 422 session_expired too.
func (svc *Service) CancelByBuyer(ctx context.Context, sessionID, clientSecret string) (*Session, error) {
	// ctx carries the clock reading of the secret check: Cancel reads the same time.
	b, err := svc.buyerSession(ctx, sessionID, clientSecret)
	if err != nil {
		return nil, err
	}
	out, err := svc.Cancel(b.ctx, b.session.Scope(), b.session.ID())
	if errors.Is(err, ErrSessionAlreadyCompleted) {
		// A payment won the race: the secret is no longer valid.
		return nil, ErrSessionExpired
	}
	return out, err
}
