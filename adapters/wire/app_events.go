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
	case core.ObjectInvoice:
		var inv api.Invoice
		if err := json.Unmarshal(r.Object, &inv); err != nil {
			return nil, err
		}
		return AppInvoiceOf(inv), nil
	case core.ObjectSubscription:
		var sub api.Subscription
		if err := json.Unmarshal(r.Object, &sub); err != nil {
			return nil, err
		}
		return appSubscription(&sub), nil
	case core.ObjectCharge, core.ObjectDispute, core.ObjectRefund, core.ObjectPayout,
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

// AppInvoiceLine is a line of an invoice (app-events.yaml AppInvoiceLine).
type AppInvoiceLine struct {
	Description string   `json:"description"`
	Quantity    int64    `json:"quantity"`
	UnitAmount  AppMoney `json:"unit_amount"`
	VATRate     string   `json:"vat_rate"`
	Amount      AppMoney `json:"amount"`
	VATAmount   AppMoney `json:"vat_amount"`
	PriceID     *string  `json:"price_id"`
	ProductID   *string  `json:"product_id"`
}

// AppInvoice is an invoice (app-events.yaml AppInvoice; the App API's invoice): dates as
// YYYY-MM-DD (UTC), money as {amount, currency}.
type AppInvoice struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Number        *string           `json:"number"`
	Status        string            `json:"status"`
	CustomerName  string            `json:"customer_name"`
	CustomerEmail string            `json:"customer_email"`
	LineItems     []AppInvoiceLine  `json:"line_items"`
	Subtotal      AppMoney          `json:"subtotal"`
	VATAmount     AppMoney          `json:"vat_amount"`
	Total         AppMoney          `json:"total"`
	AmountDue     AppMoney          `json:"amount_due"`
	AmountPaid    AppMoney          `json:"amount_paid"`
	AttemptCount  int               `json:"attempt_count"`
	PaymentID     *string           `json:"payment_id"`
	Metadata      map[string]string `json:"metadata"`
	IssueDate     *string           `json:"issue_date"`
	DueDate       *string           `json:"due_date"`
	Created       string            `json:"created"`
}

// appDate renders Unix seconds as a YYYY-MM-DD date in UTC.
func appDate(unix *int64) *string {
	if unix == nil {
		return nil
	}
	d := time.Unix(*unix, 0).UTC().Format(time.DateOnly)
	return &d
}

// AppInvoiceOf renders the merchant form of an invoice in the app form.
func AppInvoiceOf(inv api.Invoice) AppInvoice {
	m := func(v int64) AppMoney { return appMoney(v, inv.Currency) }
	out := AppInvoice{ID: inv.Id, Object: "invoice", Number: inv.Number, Status: string(inv.Status),
		CustomerName: inv.CustomerName, CustomerEmail: inv.CustomerEmail, LineItems: make([]AppInvoiceLine, 0, len(inv.LineItems)),
		Subtotal: m(inv.Subtotal), VATAmount: m(inv.VatAmount), Total: m(inv.TotalAmount), AmountDue: m(inv.AmountDue),
		AmountPaid: m(inv.AmountPaid), AttemptCount: inv.AttemptCount, PaymentID: inv.PaymentId, Metadata: appMetadata(inv.Metadata),
		IssueDate: appDate(inv.IssueDate), DueDate: appDate(inv.DueDate), Created: appTime(inv.Created)}
	for _, l := range inv.LineItems {
		out.LineItems = append(out.LineItems, AppInvoiceLine{Description: l.Description, Quantity: l.Quantity,
			UnitAmount: m(l.UnitAmount), VATRate: l.VatRate, Amount: m(l.Amount), VATAmount: m(l.VatAmount),
			PriceID: l.PriceId, ProductID: l.ProductId})
	}
	return out
}

// AppSubscription is the app form of a subscription (app-events.yaml AppSubscription).
type AppSubscription struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Status             string            `json:"status"`
	Customer           string            `json:"customer"`
	PriceID            string            `json:"price_id"`
	Quantity           int64             `json:"quantity"`
	Amount             AppMoney          `json:"amount"`
	CurrentPeriodStart string            `json:"current_period_start"`
	CurrentPeriodEnd   string            `json:"current_period_end"`
	TrialEnd           *string           `json:"trial_end"`
	CancelAtPeriodEnd  bool              `json:"cancel_at_period_end"`
	CanceledAt         *string           `json:"canceled_at"`
	EndedAt            *string           `json:"ended_at"`
	Metadata           map[string]string `json:"metadata"`
	Created            string            `json:"created"`
}

func appSubscription(s *api.Subscription) AppSubscription {
	at := func(u *int64) *string {
		if u == nil {
			return nil
		}
		v := appTime(*u)
		return &v
	}
	return AppSubscription{ID: s.Id, Object: "subscription", Status: string(s.Status), Customer: s.Customer, PriceID: s.PriceId,
		Quantity: s.Quantity, Amount: appMoney(s.Amount, s.Currency), CurrentPeriodStart: appTime(s.CurrentPeriodStart),
		CurrentPeriodEnd: appTime(s.CurrentPeriodEnd), TrialEnd: at(s.TrialEnd), CancelAtPeriodEnd: s.CancelAtPeriodEnd,
		CanceledAt: at(s.CanceledAt), EndedAt: at(s.EndedAt), Metadata: appMetadata(s.Metadata), Created: appTime(s.Created)}
}
