package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Decline is a refused charge as the customer is told: 402 card_error / card_declined with
// decline_code Code (D6); Param names the input it is about, when one is.
type Decline struct {
	Code    string
	Message string
	Param   string
}

// ChargeOutcome is what applying a processor answer writes. The Charger builds it under the
// payable's and the attempt's locks and hands it to the owner (PayableOwner.ApplyOutcome).
type ChargeOutcome struct {
	Result       ports.ChargeOutcome
	ProcessorRef string
	Method       ports.PaymentMethodKind
	Card         *ports.CardInfo
	// Payment is the new payment of a succeeded or processing charge.
	Payment *Record
	// Mail is queued with it (MailOnCreate: the receipt of a payment that succeeded as it was
	// created).
	Mail []core.Mail
	// Decline is set for a failed charge.
	Decline *Decline
	// CustomerActionRequired: an off-session charge failed because it needs the customer
	// (decline code authentication_required); the owner may ask them to pay themselves.
	CustomerActionRequired bool
	// Action is what a requires_action charge waits for, and CustomerAction what answering it
	// needs (the owner keeps it).
	Action         *ports.ChargeAction
	CustomerAction *CustomerAction
	// Events are the payment_intent.* events, stamped at the attempt's time:
	// payment_intent.succeeded (succeeded), payment_intent.payment_failed (failed),
	// payment_intent.requires_action (requires_action); none for processing.
	Events []core.Event
}

// prepared is what an outcome needs decided before any lock: the fee (which reads FX rates)
// and the checks of the processor's answer.
type prepared struct {
	res    ports.ChargeResult
	result ports.ChargeOutcome
	fee    Fee
	// decline of a failed charge
	decline *Decline
	needs   bool // CustomerActionRequired
	action  *ports.ChargeAction
}

// prepare decides what the processor's answer res to attempt a writes, before any lock. A
// completing answer (succeeded, processing) gets its fee (D7: computed at the attempt's time
// from the FX port, the card's country deciding EEA or not). card fills in the card when the
// answer has none (CompleteAction may answer without it). An off-session charge that would
// need the customer (requires_action) is failed with authentication_required.
func (c *Charger) prepare(ctx context.Context, a *ChargeAttempt, res ports.ChargeResult, card *ports.CardInfo) (*prepared, error) {
	if res.Card == nil {
		res.Card = card
	}
	pre := &prepared{res: res, result: res.Outcome}
	switch res.Outcome {
	case ports.OutcomeSucceeded, ports.OutcomeProcessing:
		switch {
		case res.ProcessorRef == "":
			return nil, errors.New("payments: charge: processor reference is missing")
		case a.method == ports.MethodCard && res.Card == nil:
			return nil, errors.New("payments: charge: card details are missing")
		case a.method == ports.MethodSEPADebit && res.SEPA == nil:
			return nil, errors.New("payments: charge: SEPA details are missing")
		case res.Outcome == ports.OutcomeProcessing && res.SettlesAt == nil:
			return nil, errors.New("payments: charge: a processing charge needs its settlement time")
		}
		fi := FeeInput{Amount: a.amount, Currency: a.currency, Method: PaymentMethod(a.method), ChargedAt: a.chargedAt}
		if a.method == ports.MethodCard {
			fi.CardCountry = res.Card.Country
		}
		fee, err := c.fees.Compute(ctx, fi)
		if err != nil {
			return nil, fmt.Errorf("payments: charge %s: %w", a.IdempotencyKey(), err)
		}
		pre.fee = fee
	case ports.OutcomeFailed:
		pre.decline = declineOf(res)
		pre.needs = a.offSession && pre.decline.Code == ports.DeclineAuthenticationRequired
	case ports.OutcomeRequiresAction:
		if a.offSession { // the customer is not there to authenticate
			pre.result, pre.needs = ports.OutcomeFailed, true
			pre.decline = &Decline{Code: ports.DeclineAuthenticationRequired,
				Message: "This payment needs the customer to authenticate it."}
			break
		}
		if res.ProcessorRef == "" {
			return nil, fmt.Errorf("payments: outcome of %s: requires_action without a processor reference", a.IdempotencyKey())
		}
		action := ports.ChargeAction{Kind: ports.ActionThreeDSecure}
		if res.Action != nil {
			action = *res.Action
		}
		pre.action = &action
	default:
		return nil, fmt.Errorf("payments: %s: unexpected charge outcome %q", a.IdempotencyKey(), res.Outcome)
	}
	return pre, nil
}

func declineOf(res ports.ChargeResult) *Decline {
	code := res.DeclineCode
	if code == "" {
		code = ports.DeclineGenericDecline
	}
	msg := res.FailureMessage
	if msg == "" {
		msg = "The payment was declined."
	}
	return &Decline{Code: code, Message: msg, Param: declineParam[code]}
}

// build turns the prepared answer into what is written for attempt a of p (a payable of kind
// spec, locked): the payment of a completing charge, with its receipt, and the events.
func (pre *prepared) build(spec KindSpec, p Payable, a *ChargeAttempt) (*ChargeOutcome, error) {
	if p.ID() != a.reference || p.Scope() != a.scope {
		return nil, errors.New("payments: outcome: the attempt is not the payable's")
	}
	res, now := pre.res, a.chargedAt
	out := &ChargeOutcome{Result: pre.result, ProcessorRef: res.ProcessorRef, Method: a.method, Card: res.Card,
		Decline: pre.decline, CustomerActionRequired: pre.needs, Action: pre.action}
	link := linkOf(spec, p.ID())
	switch pre.result {
	case ports.OutcomeSucceeded, ports.OutcomeProcessing:
		rec, err := newPayment(spec, p, a, res, pre.fee)
		if err != nil {
			return nil, err
		}
		out.Payment = rec
		out.Mail = MailOnCreate(rec.Payment) // a payment that succeeds as it is created queues its receipt
		if rec.Payment.Status() == StatusSucceeded {
			out.Events = []core.Event{core.NewEvent(EventPaymentIntentSucceeded, p.Scope(), now, PaymentEvent{Payment: rec.Payment})}
		}
	case ports.OutcomeFailed:
		msg := res.FailureMessage
		if res.Outcome != ports.OutcomeFailed { // an off-session charge that needed the customer
			msg = pre.decline.Message
		}
		out.Events = []core.Event{core.NewEvent(EventPaymentIntentPaymentFailed, p.Scope(), now,
			chargeDeclined(link, p, a.method, pre.decline.Code, msg, res.Card, now))}
	case ports.OutcomeRequiresAction:
		out.CustomerAction = &CustomerAction{ProcessorRef: res.ProcessorRef, Method: a.method, Card: res.Card, Action: *pre.action}
		out.Events = []core.Event{core.NewEvent(EventPaymentIntentRequiresAction, p.Scope(), now,
			chargeRequiresAction(link, p, a.method, res.Card, *pre.action, now))}
	}
	return out, nil
}

// newPayment builds the payment of attempt a of p (not yet stored) with its locked fee.
func newPayment(spec KindSpec, p Payable, a *ChargeAttempt, res ports.ChargeResult, fee Fee) (*Record, error) {
	now := a.chargedAt
	status := StatusSucceeded
	if res.Outcome == ports.OutcomeProcessing {
		status = StatusProcessing
	}
	rec := &Record{ProcessorRef: res.ProcessorRef, PayableKey: p.ID()}
	if spec.Payments == OnePaymentPerAttempt {
		rec.PayableKey = a.IdempotencyKey()
	}
	if d := res.Dispute; d != nil {
		t := d.OpensAt.UTC()
		rec.DisputeOpensAt, rec.DisputeReason = &t, d.Reason
	}
	var due DueFacts
	if status == StatusProcessing {
		due.SettlesAt = res.SettlesAt
	} else {
		avail := now.Add(FundsDelay)
		if res.FundsAvailableNow {
			avail = now
		}
		due.AvailableAt = &avail
	}
	rec.WithDueFacts(due)
	var card *Card
	if a.method == ports.MethodCard {
		ci := res.Card
		card = &Card{Brand: ci.Brand, Last4: ci.Last4, Country: ci.Country, Funding: ci.Funding}
		rec.CardExpMonth, rec.CardExpYear = ci.ExpMonth, ci.ExpYear
	} else {
		rec.SEPACountry, rec.SEPALast4 = res.SEPA.Country, res.SEPA.Last4
	}
	params := NewPaymentParams{
		Scope: p.Scope(), PayableKind: spec.Name, Amount: p.Amount(), Currency: p.Currency(), Status: status,
		Method: PaymentMethod(a.method), Card: card, Fee: fee,
		Customer:  Customer{Name: p.CustomerName(), Email: p.CustomerEmail()},
		Reference: p.Reference(), Metadata: p.Metadata(), Created: now,
	}
	id := p.ID()
	if spec.Link == LinkSession {
		params.SessionID = &id
	} else {
		params.InvoiceID = &id
	}
	pay, err := NewPayment(params)
	if err != nil {
		return nil, err
	}
	rec.Payment = pay
	return rec, nil
}

// payableLink is the payable's id in the field its kind names (events carry session_id or
// invoice_id).
type payableLink struct{ sessionID, invoiceID string }

func linkOf(spec KindSpec, id string) payableLink {
	if spec.Link == LinkSession {
		return payableLink{sessionID: id}
	}
	return payableLink{invoiceID: id}
}

// Failure codes of payment_intent.payment_failed (interface 6.2, D6).
const (
	// FailureCardDeclined is the failure_code of a declined card (the 402 card_error code).
	FailureCardDeclined = "card_declined"
	// FailurePaymentMethodDeclined is the failure_code of a refused SEPA debit.
	FailurePaymentMethodDeclined = "payment_method_declined"
)

// declineParam names the input a decline is about, when one is (the confirm body's fields).
var declineParam = map[string]string{
	ports.DeclineIncorrectCVC:       "card.cvc",
	ports.DeclineInvalidCVC:         "card.cvc",
	ports.DeclineIncorrectNumber:    "card.number",
	ports.DeclineExpiredCard:        "card.exp_month",
	ports.DeclineInvalidExpiryMonth: "card.exp_month",
	ports.DeclineInvalidExpiryYear:  "card.exp_year",
	ports.DeclineInvalidIBAN:        "sepa_debit.iban",
}

// chargeDeclined is the subject of payment_intent.payment_failed for a declined charge of p. A
// SEPA debit carries no card.
func chargeDeclined(l payableLink, p Payable, method ports.PaymentMethodKind, code, message string, c *ports.CardInfo, now time.Time) ChargeDeclined {
	failure := FailureCardDeclined
	if method == ports.MethodSEPADebit {
		failure = FailurePaymentMethodDeclined
		c = nil
	}
	return ChargeDeclined{SessionID: l.sessionID, InvoiceID: l.invoiceID, Amount: p.Amount(), Currency: p.Currency(),
		Method: method, FailureCode: failure, DeclineCode: code, FailureMessage: message, Card: c, At: now}
}

// chargeRequiresAction is the subject of payment_intent.requires_action for a charge of p
// waiting on the customer.
func chargeRequiresAction(l payableLink, p Payable, method ports.PaymentMethodKind, c *ports.CardInfo, a ports.ChargeAction, now time.Time) ChargeRequiresAction {
	return ChargeRequiresAction{SessionID: l.sessionID, InvoiceID: l.invoiceID, Amount: p.Amount(), Currency: p.Currency(),
		Method: method, Card: c, Action: a, At: now}
}

// DeclineParam names the confirm body's field a decline code is about ("" for none), for a
// module that answers a processor's refusal the way a charge's decline is answered (a saved
// payment method's setup).
func DeclineParam(code string) string { return declineParam[code] }
