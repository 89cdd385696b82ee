package payments

import (
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// PaymentEvent reports a change of a payment (payment_intent.succeeded and
// payment_intent.payment_failed of a settled debit); data.object is the payment.
type PaymentEvent struct{ Payment *Payment }

// EventObjectID is the payment's id.
func (e PaymentEvent) EventObjectID() string { return e.Payment.ID() }

// DisputeEvent reports a dispute opened on a payment (charge.dispute.created); data.object is
// the dispute.
type DisputeEvent struct{ Dispute *Dispute }

// EventObjectID is the dispute's id.
func (e DisputeEvent) EventObjectID() string { return e.Dispute.ID() }

// ChargeDeclined reports a declined charge of a payable (payment_intent.payment_failed; no
// payment exists for it, so the event names no object): data.object is {object:
// "payment_intent", session_id (or invoice_id), amount, currency, payment_method,
// failure_code, decline_code, failure_message, card or null, created}.
type ChargeDeclined struct {
	// SessionID or InvoiceID is the payable charged (exactly one is set).
	SessionID, InvoiceID string
	Amount               int64
	Currency             core.Currency
	Method               ports.PaymentMethodKind
	FailureCode          string // FailureCardDeclined or FailurePaymentMethodDeclined
	DeclineCode          string // ports.Decline*
	FailureMessage       string
	Card                 *ports.CardInfo // a card charge whose number was readable; nil otherwise
	At                   time.Time
}

// EventObjectID is "": a declined charge has no payment.
func (ChargeDeclined) EventObjectID() string { return "" }

// ChargeRequiresAction reports a charge waiting on the shopper (payment_intent.requires_action):
// data.object is {object: "payment_intent", session_id (or invoice_id), amount, currency,
// status: "requires_action", payment_method, next_action {type, redirect_url}, card or null,
// created}.
type ChargeRequiresAction struct {
	// SessionID or InvoiceID is the payable charged (exactly one is set).
	SessionID, InvoiceID string
	Amount               int64
	Currency             core.Currency
	Method               ports.PaymentMethodKind
	Card                 *ports.CardInfo
	Action               ports.ChargeAction
	At                   time.Time
}

// EventObjectID is "": no payment exists yet.
func (ChargeRequiresAction) EventObjectID() string { return "" }

// ChargeCanceled reports a charge that waited on the shopper and ended without being paid
// (payment_intent.canceled): the shopper started another charge, or the payable was canceled
// or expired meanwhile. data.object is the PaymentIntent with status "canceled".
type ChargeCanceled struct {
	// SessionID or InvoiceID is the payable charged (exactly one is set).
	SessionID, InvoiceID string
	Amount               int64
	Currency             core.Currency
	Method               ports.PaymentMethodKind
	Card                 *ports.CardInfo
	At                   time.Time
}

// EventObjectID is "": the charge created no payment.
func (ChargeCanceled) EventObjectID() string { return "" }
