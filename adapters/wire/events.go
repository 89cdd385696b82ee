package wire

import (
	"fmt"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	api "github.com/kassa-pay/kassa/openapi/gen/schemas"
	"github.com/kassa-pay/kassa/ports"
)

// MerchantPayload renders e's domain event into the data.object the merchant channel carries
// (and GET /v1/events lists): the outbox stores it with the event. A domain event this
// function does not know is an error, so an event is never written without its payload.
func MerchantPayload(e core.Event) (any, error) {
	switch ev := e.Subject.(type) {
	case checkout.SessionEvent:
		return Session(ev.Session), nil
	case payments.PaymentEvent:
		return Payment(ev.Payment), nil
	case payments.DisputeEvent:
		return Dispute(ev.Dispute), nil
	case payments.ChargeDeclined:
		return chargeDeclined{
			chargeHead:    headOf(ev.SessionID, ev.InvoiceID, ev.Amount, ev.Currency),
			PaymentMethod: string(ev.Method), FailureCode: ev.FailureCode,
			DeclineCode: ev.DeclineCode, FailureMessage: ev.FailureMessage, Card: chargeCardOf(ev.Card),
			Created: ev.At.Unix(),
		}, nil
	case payments.ChargeRequiresAction:
		var redirect *string
		if u := ev.Action.RedirectURL; u != "" {
			redirect = &u
		}
		return chargeRequiresAction{
			chargeHead: headOf(ev.SessionID, ev.InvoiceID, ev.Amount, ev.Currency),
			Status:     "requires_action", PaymentMethod: string(ev.Method),
			NextAction: nextAction{Type: ev.Action.Kind, RedirectURL: redirect},
			Card:       chargeCardOf(ev.Card), Created: ev.At.Unix(),
		}, nil
	}
	return nil, fmt.Errorf("wire: %s: no merchant rendering for %T", e.Type, e.Subject)
}

// Dispute renders a dispute (merchant.yaml components.schemas.Dispute, generated once in the
// shared schemas package): the data.object of charge.dispute.created.
func Dispute(d *payments.Dispute) api.Dispute {
	return api.Dispute{
		Id: d.ID(), Object: api.DisputeObjectDispute, PaymentId: d.PaymentID(), Amount: d.Amount(),
		Currency: string(d.Currency()), Reason: d.Reason(), Status: api.DisputeStatus(d.Status()),
		EvidenceDueBy: d.EvidenceDueBy().Unix(), Created: d.Created().Unix(),
	}
}

// chargeCard is the card of a charge that created no payment (brand, last4, country, funding).
type chargeCard struct {
	Brand   string `json:"brand"`
	Last4   string `json:"last4"`
	Country string `json:"country"`
	Funding string `json:"funding"`
}

func chargeCardOf(c *ports.CardInfo) *chargeCard {
	if c == nil {
		return nil
	}
	return &chargeCard{Brand: c.Brand, Last4: c.Last4, Country: c.Country, Funding: c.Funding}
}

// chargeHead opens the data.object of a charge that created no payment: the payable charged
// and the amount.
type chargeHead struct {
	Object    string `json:"object"`
	SessionID string `json:"session_id,omitempty"` // the payable: a session
	InvoiceID string `json:"invoice_id,omitempty"` // or an invoice
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

func headOf(sessionID, invoiceID string, amount int64, cur core.Currency) chargeHead {
	return chargeHead{Object: "payment_intent", SessionID: sessionID, InvoiceID: invoiceID, Amount: amount, Currency: string(cur)}
}

// chargeDeclined is the data.object of payment_intent.payment_failed for a declined charge.
type chargeDeclined struct {
	chargeHead
	PaymentMethod  string      `json:"payment_method"`
	FailureCode    string      `json:"failure_code"`
	DeclineCode    string      `json:"decline_code"`
	FailureMessage string      `json:"failure_message"`
	Card           *chargeCard `json:"card"`
	Created        int64       `json:"created"`
}

// chargeRequiresAction is the data.object of payment_intent.requires_action.
type chargeRequiresAction struct {
	chargeHead
	Status        string      `json:"status"`
	PaymentMethod string      `json:"payment_method"`
	NextAction    nextAction  `json:"next_action"`
	Card          *chargeCard `json:"card"`
	Created       int64       `json:"created"`
}

type nextAction struct {
	Type        string  `json:"type"`
	RedirectURL *string `json:"redirect_url"`
}
