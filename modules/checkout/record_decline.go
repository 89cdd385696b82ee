package checkout

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Failure codes of payment_intent.payment_failed (interface 6.2, D6).
const (
	// FailureCardDeclined is the failure_code of a declined card (the 402 card_error code).
	FailureCardDeclined = "card_declined"
	// FailurePaymentMethodDeclined is the failure_code of a refused SEPA debit.
	FailurePaymentMethodDeclined = "payment_method_declined"
)

// DeclineInput is a failed charge of a session as the processor answered it.
type DeclineInput struct {
	Method         ports.PaymentMethodKind
	DeclineCode    string // ports.Decline*
	FailureMessage string
	Card           *ports.CardInfo // when the number was readable
	SEPA           *ports.SEPAInfo // when the IBAN was valid
}

// RecordDecline writes payment_intent.payment_failed for a declined charge of a session. It
// writes only the event: the session is not touched and stays open so the buyer can retry
// (D6); the caller answers the buyer with 402 card_error / card_declined. No payment is
// created for a decline. Confirm and ResolveAction do not call it: they write the same event
// (chargeDeclined) in the transaction that also counts the decline on the session, which
// RecordDecline does not. The event is written whatever the session's status (the charge was
// refused whatever it is), under the session's row lock so it is ordered with the session's
// other changes; an unknown session answers core.NotFound.
//
// data.object is {object: "payment_intent", session_id, amount, currency, payment_method,
// failure_code, decline_code, failure_message, card (brand, last4, country, funding) or null,
// created}.
func (svc *Service) RecordDecline(ctx context.Context, scope core.Scope, sessionID string, in DeclineInput) error {
	if in.DeclineCode == "" {
		return errors.New("checkout: record decline: decline code is missing")
	}
	if !in.Method.Valid() {
		return errors.New("checkout: record decline: unknown payment method")
	}
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return err
	}
	_, err = svc.store.Update(ctx, scope, sessionID, func(s *Session) ([]core.Event, error) {
		return []core.Event{core.NewEvent(payments.EventPaymentIntentPaymentFailed, scope, now, chargeDeclined(s, in, now))}, nil
	})
	return err
}

// chargeDeclined is the subject of payment_intent.payment_failed for a declined charge of s.
func chargeDeclined(s *Session, in DeclineInput, now time.Time) ChargeDeclined {
	failure := FailureCardDeclined
	if in.Method == ports.MethodSEPADebit {
		failure = FailurePaymentMethodDeclined
	}
	var card *ports.CardInfo
	if in.Method == ports.MethodCard {
		card = in.Card
	}
	return ChargeDeclined{SessionID: s.ID(), Amount: s.Amount(), Currency: s.Currency(), Method: in.Method,
		FailureCode: failure, DeclineCode: in.DeclineCode, FailureMessage: in.FailureMessage, Card: card, At: now}
}
