package invoicing

import (
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Event types of invoices: references into the event catalog (core.EventCatalog).
const (
	EventFinalized           = core.EventInvoiceFinalized
	EventPaid                = core.EventInvoicePaid
	EventPaymentFailed       = core.EventInvoicePaymentFailed
	EventPaymentSucceeded    = core.EventInvoicePaymentSucceeded
	EventVoided              = core.EventInvoiceVoided
	EventMarkedUncollectible = core.EventInvoiceMarkedUncollectible
)

// InvoiceEvent is an event about an invoice: data.object is the invoice at event time.
type InvoiceEvent struct {
	Invoice *Invoice
	// HostedURL is the invoice's hosted page at event time (nil for a draft).
	HostedURL *string
}

// EventObjectID is the invoice's id.
func (e InvoiceEvent) EventObjectID() string { return e.Invoice.ID() }

func event(base string, typ core.EventType, inv *Invoice, at time.Time) core.Event {
	return core.NewEvent(typ, inv.Scope(), at, InvoiceEvent{Invoice: Rehydrate(inv.Snapshot()), HostedURL: hostedURL(base, inv)})
}

// hostedURL is {base}/i/{public_token}, or nil for a draft.
func hostedURL(base string, inv *Invoice) *string {
	t := inv.PublicToken()
	if t == nil {
		return nil
	}
	u := base + "/i/" + *t
	return &u
}
