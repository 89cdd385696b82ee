package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	api "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// The app channel's forms of the objects events are about (openapi/app-events.yaml): the
// App API's conventions (D11, D17) — one shape for sandbox and live, ISO 8601 UTC times, money
// as {amount, currency} with a lower-case currency. They are rendered from the kept object
// (its merchant API form), never from the entities, so an event kept before a change renders
// like one kept after it. A checkout session's client secret and its URLs stay with the
// merchant: an app reads what was sold and paid, not how to pay it.

// AppMoney is an amount of money: minor units and a lower-case ISO 4217 code.
type AppMoney struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

func appMoney(amount int64, cur string) AppMoney {
	return AppMoney{Amount: amount, Currency: strings.ToLower(cur)}
}

// appTime renders Unix seconds in ISO 8601 UTC (2026-05-01T08:30:00Z).
func appTime(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// AppCard is the card of a payment or a charge.
type AppCard struct {
	Brand   string `json:"brand"`
	Last4   string `json:"last4"`
	Country string `json:"country"`
	Funding string `json:"funding"`
}

func appCard(c *api.PaymentCard) *AppCard {
	if c == nil {
		return nil
	}
	return &AppCard{Brand: c.Brand, Last4: c.Last4, Country: c.Country, Funding: c.Funding}
}

// AppCustomer is who paid.
type AppCustomer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// AppPayment is a payment (app-events.yaml AppPayment).
type AppPayment struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	SessionID      *string           `json:"session_id"`
	InvoiceID      *string           `json:"invoice_id"`
	Amount         AppMoney          `json:"amount"`
	AmountRefunded AppMoney          `json:"amount_refunded"`
	Status         string            `json:"status"`
	PaymentMethod  string            `json:"payment_method"`
	Card           *AppCard          `json:"card"`
	Customer       AppCustomer       `json:"customer"`
	Reference      *string           `json:"reference"`
	Metadata       map[string]string `json:"metadata"`
	FailureCode    *string           `json:"failure_code"`
	FailureMessage *string           `json:"failure_message"`
	Created        string            `json:"created"`
}

func appPayment(p *api.Payment) *AppPayment {
	if p == nil {
		return nil
	}
	return &AppPayment{
		ID: p.Id, Object: "payment", SessionID: p.SessionId, InvoiceID: p.InvoiceId,
		Amount: appMoney(p.Amount, p.Currency), AmountRefunded: appMoney(p.AmountRefunded, p.Currency),
		Status: string(p.Status), PaymentMethod: string(p.PaymentMethod), Card: appCard(p.Card),
		Customer: AppCustomer{Name: p.Customer.Name, Email: p.Customer.Email}, Reference: p.Reference,
		Metadata: appMetadata(p.Metadata), FailureCode: p.FailureCode, FailureMessage: p.FailureMessage,
		Created: appTime(p.Created),
	}
}

func appMetadata(m api.Metadata) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// AppLineItem is a line of a checkout session.
type AppLineItem struct {
	Name      string    `json:"name"`
	Quantity  int       `json:"quantity"`
	Amount    *AppMoney `json:"amount"`
	PriceID   *string   `json:"price_id"`
	ProductID *string   `json:"product_id"`
}

// AppCheckoutSession is a checkout session (app-events.yaml AppCheckoutSession).
type AppCheckoutSession struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Status             string            `json:"status"`
	PaymentStatus      *string           `json:"payment_status"`
	Amount             AppMoney          `json:"amount"`
	LineItems          []AppLineItem     `json:"line_items"`
	CustomerName       string            `json:"customer_name"`
	CustomerEmail      string            `json:"customer_email"`
	Reference          *string           `json:"reference"`
	Description        *string           `json:"description"`
	Metadata           map[string]string `json:"metadata"`
	CancellationReason *string           `json:"cancellation_reason"`
	Payment            *AppPayment       `json:"payment"`
	ExpiresAt          string            `json:"expires_at"`
	Created            string            `json:"created"`
}

func appSession(s *api.CheckoutSession) AppCheckoutSession {
	items := make([]AppLineItem, 0, len(s.LineItems))
	for _, li := range s.LineItems {
		it := AppLineItem{Name: li.Name, Quantity: li.Quantity, PriceID: li.PriceId, ProductID: li.ProductId}
		if li.Amount != nil {
			m := appMoney(*li.Amount, s.Currency)
			it.Amount = &m
		}
		items = append(items, it)
	}
	out := AppCheckoutSession{
		ID: s.Id, Object: "checkout.session", Status: string(s.Status), Amount: appMoney(s.Amount, s.Currency),
		LineItems: items, CustomerName: s.CustomerName, CustomerEmail: s.CustomerEmail, Reference: s.Reference,
		Description: s.Description, Metadata: appMetadata(s.Metadata), Payment: appPayment(s.Payment),
		ExpiresAt: appTime(s.ExpiresAt), Created: appTime(s.Created),
	}
	if s.PaymentStatus != nil {
		ps := string(*s.PaymentStatus)
		out.PaymentStatus = &ps
	}
	if s.CancellationReason != nil {
		cr := string(*s.CancellationReason)
		out.CancellationReason = &cr
	}
	return out
}

// AppNextAction is what a charge waits for.
type AppNextAction struct {
	Type string `json:"type"`
}

// AppPaymentIntent is the charge of a payable (app-events.yaml AppPaymentIntent): the one
// shape of payment_intent.payment_failed and payment_intent.requires_action.
type AppPaymentIntent struct {
	ID             *string        `json:"id"`
	Object         string         `json:"object"`
	SessionID      *string        `json:"session_id"`
	InvoiceID      *string        `json:"invoice_id"`
	Amount         AppMoney       `json:"amount"`
	Status         string         `json:"status"`
	PaymentMethod  string         `json:"payment_method"`
	FailureCode    *string        `json:"failure_code"`
	DeclineCode    *string        `json:"decline_code"`
	FailureMessage *string        `json:"failure_message"`
	NextAction     *AppNextAction `json:"next_action"`
	Card           *AppCard       `json:"card"`
	Payment        *AppPayment    `json:"payment"`
	Created        string         `json:"created"`
}

func appPaymentIntent(pi api.PaymentIntent) AppPaymentIntent {
	out := AppPaymentIntent{
		ID: pi.Id, Object: "payment_intent", SessionID: pi.SessionId, InvoiceID: pi.InvoiceId,
		Amount: appMoney(pi.Amount, pi.Currency), Status: string(pi.Status), PaymentMethod: string(pi.PaymentMethod),
		FailureCode: pi.FailureCode, DeclineCode: pi.DeclineCode, FailureMessage: pi.FailureMessage,
		Card: appCard(pi.Card), Payment: appPayment(pi.Payment), Created: appTime(pi.Created),
	}
	if pi.NextAction != nil {
		out.NextAction = &AppNextAction{Type: string(pi.NextAction.Type)}
	}
	return out
}

// appObject renders the kept event r for the app channel. An event the app channel does not
// carry is an error: apps receive exactly the catalog of interface 6.2.
func appObject(r core.EventRecord) (any, error) {
	if !core.IsEventOn(string(r.Type), core.ChannelApp) {
		return nil, fmt.Errorf("the app channel does not carry %s", r.Type)
	}
	if isChargeEvent(r.Type) {
		pi, err := paymentIntentOf(r)
		if err != nil {
			return nil, err
		}
		return appPaymentIntent(pi), nil
	}
	if r.Type == core.EventCheckoutSessionRefunded {
		var sr sessionRefund
		if err := json.Unmarshal(r.Object, &sr); err != nil {
			return nil, err
		}
		cur := sr.Currency
		return AppSessionRefund{ID: sr.ID, Object: sr.Object, PaymentID: sr.PaymentID, Amount: appMoney(sr.Amount, cur),
			AmountRefunded: appMoney(sr.AmountRefunded, cur), FullyRefunded: sr.FullyRefunded, RefundID: sr.RefundID,
			Created: appTime(sr.Created)}, nil
	}
	switch r.ObjectKind {
	case core.ObjectCheckoutSession:
		var s api.CheckoutSession
		if err := json.Unmarshal(r.Object, &s); err != nil {
			return nil, err
		}
		return appSession(&s), nil
	case core.ObjectPayment:
		var p api.Payment
		if err := json.Unmarshal(r.Object, &p); err != nil {
			return nil, err
		}
		return appPayment(&p), nil
	case core.ObjectCharge, core.ObjectDispute, core.ObjectRefund, core.ObjectInvoice, core.ObjectSubscription, core.ObjectPayout,
		core.ObjectWebhookEndpoint:
		// A charge renders through paymentIntentOf above; the others have no app form yet.
	}
	return nil, fmt.Errorf("no app form of a %s", r.ObjectKind)
}

// AppEnvelope is the body of an app event delivery (interface 6.2, D10, D17): the merchant
// envelope with the installation the event is delivered for.
type AppEnvelope struct {
	ID           string          `json:"id"`
	Object       string          `json:"object"`
	Type         string          `json:"type"`
	Environment  string          `json:"environment"`
	Installation string          `json:"installation"`
	APIVersion   string          `json:"api_version"`
	Created      int64           `json:"created"`
	Data         AppEnvelopeData `json:"data"`
}

// AppEnvelopeData holds data.object.
type AppEnvelopeData struct {
	Object json.RawMessage `json:"object"`
}

// AppEvent renders the body of the delivery of r to an app installed as installation.
func AppEvent(r core.EventRecord, installation string) ([]byte, error) {
	obj, err := RenderEvent(r, core.ChannelApp)
	if err != nil {
		return nil, err
	}
	return json.Marshal(AppEnvelope{ID: r.ID, Object: "event", Type: string(r.Type), Environment: string(r.Scope.Env),
		Installation: installation, APIVersion: core.APIVersion, Created: r.Created.Unix(), Data: AppEnvelopeData{Object: obj}})
}

// AppSessionRefund is the app form of checkout.session.refunded (app-events.yaml).
type AppSessionRefund struct {
	ID             string   `json:"id"`
	Object         string   `json:"object"`
	PaymentID      string   `json:"payment_id"`
	Amount         AppMoney `json:"amount"`
	AmountRefunded AppMoney `json:"amount_refunded"`
	FullyRefunded  bool     `json:"fully_refunded"`
	RefundID       string   `json:"refund_id"`
	Created        string   `json:"created"`
}
