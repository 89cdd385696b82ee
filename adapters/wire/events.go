package wire

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payouts"
	api "github.com/kassa-pay/kassa/openapi/gen/schemas"
	"github.com/kassa-pay/kassa/ports"
)

// Events are kept as what they are about and rendered per channel when they are read.
//
// EventObject gives what the outbox keeps of a domain event: the kind of its object and the
// object at event time, in its API form (the merchant API's schema of that kind at
// core.APIVersion: CheckoutSession, Payment, Dispute, or PaymentIntent for a charge that
// created no payment). RenderEvent turns a kept event into the data.object of one channel:
// the merchant channel (merchant webhooks and GET /v1/events, merchant.yaml) and the app
// channel (app events, app-events.yaml). Both read only the record, so an event written
// before a channel's shape changed renders in the new shape.

// EventObject returns the kind of e's object and the object at event time, for the outbox. A
// domain event it does not know is an error, so an event is never written without its object.
func EventObject(e core.Event) (core.ObjectKind, any, error) {
	switch ev := e.Subject.(type) {
	case checkout.SessionEvent:
		return core.ObjectCheckoutSession, Session(ev.Session), nil
	case payments.PaymentEvent:
		return core.ObjectPayment, Payment(ev.Payment), nil
	case payments.DisputeEvent:
		return core.ObjectDispute, Dispute(ev.Dispute), nil
	case payments.RefundEvent:
		return core.ObjectRefund, ChargeRefunded(ev.Refund, ev.Payment), nil
	case payments.SessionRefundEvent:
		return core.ObjectCheckoutSession, sessionRefundOf(ev.Refund, ev.Payment), nil
	case invoicing.InvoiceEvent:
		return core.ObjectInvoice, Invoice(ev.Invoice, ev.HostedURL), nil
	case billing.SubscriptionEvent:
		return core.ObjectSubscription, Subscription(ev.Subscription), nil
	case payouts.PayoutEvent:
		return core.ObjectPayout, Payout(ev.Payout), nil
	case payments.ChargeDeclined:
		pi := chargeOf(ev.SessionID, ev.InvoiceID, ev.Amount, ev.Currency, ev.Method, ev.Card, ev.At)
		pi.Status = api.PaymentIntentStatusFailed
		pi.FailureCode, pi.DeclineCode, pi.FailureMessage = optional(ev.FailureCode), optional(ev.DeclineCode), optional(ev.FailureMessage)
		return core.ObjectCharge, pi, nil
	case payments.ChargeCanceled:
		pi := chargeOf(ev.SessionID, ev.InvoiceID, ev.Amount, ev.Currency, ev.Method, ev.Card, ev.At)
		pi.Status = api.PaymentIntentStatusCanceled
		return core.ObjectCharge, pi, nil
	case payments.ChargeRequiresAction:
		pi := chargeOf(ev.SessionID, ev.InvoiceID, ev.Amount, ev.Currency, ev.Method, ev.Card, ev.At)
		pi.Status = api.PaymentIntentStatusRequiresAction
		pi.NextAction = &api.PaymentIntentNextAction{Type: api.PaymentIntentNextActionType(ev.Action.Kind), RedirectUrl: optional(ev.Action.RedirectURL)}
		return core.ObjectCharge, pi, nil
	}
	return "", nil, fmt.Errorf("wire: %s: no object for %T", e.Type, e.Subject)
}

// chargeOf opens the PaymentIntent of a charge that created no payment.
func chargeOf(sessionID, invoiceID string, amount int64, cur core.Currency, method ports.PaymentMethodKind, c *ports.CardInfo, at time.Time) api.PaymentIntent {
	pi := api.PaymentIntent{Object: api.PaymentIntentObjectPaymentIntent, SessionId: optional(sessionID),
		InvoiceId: optional(invoiceID), Amount: amount, Currency: string(cur),
		PaymentMethod: api.PaymentIntentPaymentMethod(method), Created: at.Unix()}
	if c != nil {
		pi.Card = &api.PaymentCard{Brand: c.Brand, Last4: c.Last4, Country: c.Country, Funding: c.Funding}
	}
	return pi
}

// RenderEvent returns the data.object channel ch carries for the kept event r. For the
// merchant channel that is the object as kept, except for the payment_intent.payment_failed
// and payment_intent.requires_action events, whose one shape is the PaymentIntent whether or
// not the charge created a payment. For the app channel it is the app form of the same object
// (app-events.yaml: ISO 8601 times, money as {amount, currency}, no client secret).
func RenderEvent(r core.EventRecord, ch core.Channel) (json.RawMessage, error) {
	var v any
	var err error
	switch ch {
	case core.ChannelMerchant:
		v, err = merchantObject(r)
	case core.ChannelApp:
		v, err = appObject(r)
	default:
		return nil, fmt.Errorf("wire: %s: unknown channel %d", r.Type, ch)
	}
	if err != nil {
		return nil, fmt.Errorf("wire: render %s %s: %w", r.Type, r.ID, err)
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}

// isChargeEvent reports whether typ's one object is the PaymentIntent.
func isChargeEvent(typ core.EventType) bool {
	return typ == core.EventPaymentIntentPaymentFailed || typ == core.EventPaymentIntentRequiresAction ||
		typ == core.EventPaymentIntentCanceled
}

func merchantObject(r core.EventRecord) (any, error) {
	if !isChargeEvent(r.Type) {
		return r.Object, nil
	}
	return paymentIntentOf(r)
}

// paymentIntentOf reads the PaymentIntent of a charge event from what was kept: the charge
// itself (a charge that created no payment), or the payment it created (a SEPA debit returned
// at settlement).
func paymentIntentOf(r core.EventRecord) (api.PaymentIntent, error) {
	switch r.ObjectKind {
	case core.ObjectCharge:
		var pi api.PaymentIntent
		if err := json.Unmarshal(r.Object, &pi); err != nil {
			return pi, err
		}
		// Kept before the PaymentIntent had a status: the event's type says it.
		if pi.Status == "" {
			pi.Status = api.PaymentIntentStatusFailed
			if r.Type == core.EventPaymentIntentRequiresAction {
				pi.Status = api.PaymentIntentStatusRequiresAction
			}
		}
		if pi.Status != api.PaymentIntentStatusFailed {
			pi.FailureCode, pi.DeclineCode, pi.FailureMessage = nil, nil, nil
		}
		return pi, nil
	case core.ObjectPayment:
		var p api.Payment
		if err := json.Unmarshal(r.Object, &p); err != nil {
			return api.PaymentIntent{}, err
		}
		id := p.Id
		pi := api.PaymentIntent{Id: &id, Object: api.PaymentIntentObjectPaymentIntent,
			SessionId: p.SessionId, InvoiceId: p.InvoiceId, Amount: p.Amount, Currency: p.Currency,
			Status: api.PaymentIntentStatusFailed, PaymentMethod: api.PaymentIntentPaymentMethod(p.PaymentMethod),
			FailureCode: p.FailureCode, FailureMessage: p.FailureMessage, Card: p.Card, Payment: &p, Created: r.Created.Unix()}
		return pi, nil
	case core.ObjectCheckoutSession, core.ObjectDispute, core.ObjectRefund, core.ObjectInvoice, core.ObjectSubscription, core.ObjectPayout,
		core.ObjectWebhookEndpoint:
	}
	return api.PaymentIntent{}, fmt.Errorf("a %s event about a %s", r.Type, r.ObjectKind)
}

// Dispute renders a dispute (merchant.yaml components.schemas.Dispute, generated once in the
// shared schemas package): the data.object of charge.dispute.created, charge.dispute.updated
// and charge.dispute.closed. past_due is what the dispute records (lost for want of evidence);
// the dashboard also shows an open dispute past its deadline by the scope's clock.
func Dispute(d *payments.Dispute) api.Dispute {
	fee := d.Fee()
	return api.Dispute{
		Id: d.ID(), Object: api.DisputeObjectDispute, PaymentId: d.PaymentID(), Amount: d.Amount(),
		Currency: string(d.Currency()), Reason: d.Reason(), Status: api.DisputeStatus(d.Status()),
		EvidenceDueBy: d.EvidenceDueBy().Unix(), Created: d.Created().Unix(),
		PastDue: d.PastDue(time.Time{}), EvidenceSubmittedAt: unixOrNil(d.SubmittedAt()), ClosedAt: unixOrNil(d.ClosedAt()),
		Fee: fee.Amount, FeeEur: fee.EUR, FeeRate: optional(fee.Rate),
	}
}

// unixOrNil is t in Unix seconds, or nil.
func unixOrNil(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	u := t.Unix()
	return &u
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ChargeRefunded renders the data.object of charge.refunded (interface 6.1): the payment as
// the refund left it.
func ChargeRefunded(r *payments.Refund, p *payments.Payment) api.ChargeRefunded {
	return api.ChargeRefunded{ChargeId: p.ID(), SessionId: p.SessionID(), AmountRefunded: p.AmountRefunded(),
		Amount: p.Amount(), Currency: string(p.Currency()), Reason: api.ChargeRefundedReason(r.Reason()),
		FullyRefunded: p.AmountRefunded() == p.Amount()}
}

// sessionRefund is what the outbox keeps of checkout.session.refunded: the session whose
// payment a refund changed, in the merchant API's units (Unix seconds, upper-case currency).
type sessionRefund struct {
	ID             string `json:"id"`
	Object         string `json:"object"`
	PaymentID      string `json:"payment_id"`
	Amount         int64  `json:"amount"`
	AmountRefunded int64  `json:"amount_refunded"`
	Currency       string `json:"currency"`
	FullyRefunded  bool   `json:"fully_refunded"`
	RefundID       string `json:"refund_id"`
	Created        int64  `json:"created"`
}

func sessionRefundOf(r *payments.Refund, p *payments.Payment) sessionRefund {
	return sessionRefund{ID: p.PayableID(), Object: "checkout.session", PaymentID: p.ID(), Amount: p.Amount(),
		AmountRefunded: p.AmountRefunded(), Currency: string(p.Currency()), FullyRefunded: p.AmountRefunded() == p.Amount(),
		RefundID: r.ID(), Created: r.Created().Unix()}
}

// Payout renders a payout (merchant.yaml components.schemas.Payout): the data.object of
// payout.created and payout.paid, and the dashboard's payout.
func Payout(p *payouts.Payout) api.Payout {
	return api.Payout{Id: p.ID(), Object: api.PayoutObjectPayout, Amount: p.Amount(), Currency: string(p.Currency()),
		Status: api.PayoutStatus(p.Status()), Created: p.Created().Unix(), ArrivalDate: p.ArrivalDate().Unix(),
		BalanceTransaction: p.TransactionID()}
}
