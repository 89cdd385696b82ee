package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Event types written by completion, cancellation and declines: references into the event
// catalog (core.EventCatalog).
const (
	EventCompleted           = core.EventCheckoutSessionCompleted
	EventAsyncPaymentPending = core.EventCheckoutSessionAsyncPaymentPending
	EventCanceled            = core.EventCheckoutSessionCanceled
)

// Fees computes the fee of a charge (payments.FeeCalculator implements it).
type Fees interface {
	Compute(ctx context.Context, in payments.FeeInput) (payments.Fee, error)
}

// EnablePayments wires what completing a session needs (Confirm, ResolveAction, Complete): the
// fee calculator. Until it is called, Confirm and Complete answer an error.
func (svc *Service) EnablePayments(fees Fees) {
	svc.fees = fees
}

// CompletionInput is what the processor answered for a charge of the session that moved money
// (or will: a delayed method), as the caller got it from ports.Processor.
type CompletionInput struct {
	Method ports.PaymentMethodKind
	// Outcome is succeeded (cards, SEPA settled at once) or processing (SEPA in flight).
	// Failed and requires_action never complete a session.
	Outcome      ports.ChargeOutcome
	ProcessorRef string
	// Card is required for card payments; SEPA for sepa_debit payments.
	Card *ports.CardInfo
	SEPA *ports.SEPAInfo
	// SettlesAt is when a processing charge settles (ports.ChargeResult.SettlesAt).
	SettlesAt *time.Time
	// Dispute says that the buyer's bank will open a dispute on this succeeded charge
	// (ports.ChargeResult.Dispute; the sandbox's dispute card). The payment keeps it so the
	// dispute sweep can open it when it is due.
	Dispute *ports.DisputeNotice
}

// Complete records a charge of an open session that the caller made itself. The buyer use
// cases do not call it: Confirm and ResolveAction charge under the session's row lock and
// complete the session in that same transaction (applyCharge), with the same payment and
// events. Complete serves callers that hold a processor's answer already (tests and fixtures
// that need completed sessions and payments).
//
// In one transaction under the session's row lock it re-checks that the session is open and
// not due, inserts the payment (its fee from the fee calculator with the default plan, card
// country deciding EEA or not, D7), marks the session complete and writes the events:
//
//	succeeded  → payment_intent.succeeded (data.object: the payment) and
//	             checkout.session.completed (data.object: the session with its payment)
//	processing → checkout.session.async_payment_pending (the session with its payment); the
//	             session completes too, which invalidates its client_secret (interface 3.1)
//
// checkout.session.completed thus fires once per session: concurrent calls serialise on the
// row lock and every one after the first answers ErrSessionAlreadyCompleted (422
// session_already_completed). An expired or canceled session answers ErrSessionExpired; an
// open session whose lifetime has run out is expired on the way (with its one event, stamped
// at its expires_at) and answers ErrSessionExpired too: it is never completed.
//
// A bad CompletionInput is a caller bug and answers a plain error (an opaque 500).
func (svc *Service) Complete(ctx context.Context, scope core.Scope, sessionID string, in CompletionInput) (*Session, error) {
	if svc.fees == nil {
		return nil, errors.New("checkout: complete: payments are not wired (EnablePayments)")
	}
	status, err := completionStatus(in)
	if err != nil {
		return nil, err
	}
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	// The fee needs the FX rate of the day: compute it before taking the row lock. Amount,
	// currency and customer never change after creation, so reading them unlocked is safe;
	// the status is checked again under the lock.
	current, err := svc.store.Get(ctx, scope, sessionID)
	if err != nil {
		return nil, err
	}
	var rec *payments.Record
	if !current.IsDue(now) { // a due session is expired under the lock below
		if err := current.checkOpen(now); err != nil {
			return nil, err
		}
		if rec, err = svc.newPayment(ctx, current, in, status, now); err != nil {
			return nil, err
		}
	}

	lapsed := false
	s, err := svc.store.UpdateWithPayment(ctx, scope, sessionID, func(s *Session) (*payments.Record, []core.Event, error) {
		if s.IsDue(now) {
			lapsed = true
			evs, err := svc.expiredEvent(s, expiryTime(s))
			return nil, evs, err
		}
		if err := s.checkOpen(now); err != nil {
			return nil, nil, err
		}
		if err := s.Complete(rec.Payment, now); err != nil {
			return nil, nil, err
		}
		return rec, svc.completionEvents(s, rec.Payment, now), nil
	})
	if err != nil {
		return nil, err
	}
	if lapsed {
		return nil, ErrSessionExpired
	}
	return s, nil
}

// completionStatus checks in and returns the payment's first status.
func completionStatus(in CompletionInput) (payments.Status, error) {
	var status payments.Status
	switch in.Outcome {
	case ports.OutcomeSucceeded:
		status = payments.StatusSucceeded
	case ports.OutcomeProcessing:
		status = payments.StatusProcessing
	default:
		return "", fmt.Errorf("checkout: complete: outcome %q does not complete a session", in.Outcome)
	}
	switch {
	case in.ProcessorRef == "":
		return "", errors.New("checkout: complete: processor reference is missing")
	case in.Method == ports.MethodCard && in.Card == nil:
		return "", errors.New("checkout: complete: card details are missing")
	case in.Method == ports.MethodSEPADebit && in.SEPA == nil:
		return "", errors.New("checkout: complete: SEPA details are missing")
	case in.Method != ports.MethodCard && in.Method != ports.MethodSEPADebit:
		return "", fmt.Errorf("checkout: complete: unknown payment method %q", in.Method)
	case status == payments.StatusProcessing && in.SettlesAt == nil:
		return "", errors.New("checkout: complete: a processing charge needs its settlement time")
	}
	return status, nil
}

// newPayment builds the payment of s (not yet stored) with its locked fee.
func (svc *Service) newPayment(ctx context.Context, s *Session, in CompletionInput, status payments.Status, now time.Time) (*payments.Record, error) {
	method := payments.PaymentMethod(in.Method)
	fi := payments.FeeInput{Amount: s.Amount(), Currency: s.Currency(), Method: method, ChargedAt: now}
	var card *payments.Card
	rec := &payments.Record{ProcessorRef: in.ProcessorRef}
	if d := in.Dispute; d != nil {
		t := d.OpensAt.UTC()
		rec.DisputeOpensAt, rec.DisputeReason = &t, d.Reason
	}
	if status == payments.StatusProcessing {
		t := in.SettlesAt.UTC()
		rec.SettlesAt = &t
	}
	if in.Method == ports.MethodCard {
		c := in.Card
		card = &payments.Card{Brand: c.Brand, Last4: c.Last4, Country: c.Country, Funding: c.Funding}
		fi.CardCountry = c.Country
		rec.CardExpMonth, rec.CardExpYear = c.ExpMonth, c.ExpYear
	} else {
		rec.SEPACountry, rec.SEPALast4 = in.SEPA.Country, in.SEPA.Last4
	}
	fee, err := svc.fees.Compute(ctx, fi)
	if err != nil {
		return nil, fmt.Errorf("checkout: complete %s: %w", s.ID(), err)
	}
	id := s.ID()
	p, err := payments.NewPayment(payments.NewPaymentParams{
		Scope: s.Scope(), SessionID: &id, Amount: s.Amount(), Currency: s.Currency(), Status: status,
		Method: method, Card: card, Fee: fee,
		Customer:  payments.Customer{Name: s.CustomerName(), Email: s.CustomerEmail()},
		Reference: s.Reference(), Metadata: s.Metadata(), Created: now,
	})
	if err != nil {
		return nil, err
	}
	rec.Payment = p
	rec.Mail = payments.MailOnCreate(p)
	return rec, nil
}
