package webhooks

import "slices"

// MerchantEvents is the catalog of events merchant webhooks receive (D10): the events of
// interface 6.1 plus the four checkout.session completion events. Apps have a catalog of their
// own (interface 6.2); an outbox event outside this list is never delivered to a merchant
// endpoint, even one subscribed to "*".
var MerchantEvents = []string{
	"checkout.session.completed",
	"checkout.session.expired",
	"checkout.session.async_payment_pending",
	"checkout.session.async_payment_succeeded",
	"checkout.session.async_payment_failed",
	"charge.refunded",
	"invoice.finalized",
	"invoice.paid",
	"invoice.payment_failed",
	"invoice.voided",
	"invoice.payment_succeeded",
	"customer.subscription.created",
	"customer.subscription.updated",
	"customer.subscription.deleted",
	"customer.subscription.trial_will_end",
}

// AllEvents subscribes an endpoint to every event of the merchant catalog, including those
// added later.
const AllEvents = "*"

// IsMerchantEvent reports whether typ is in the merchant catalog.
func IsMerchantEvent(typ string) bool { return slices.Contains(MerchantEvents, typ) }
