package core

import "slices"

// EventType names a kind of event ("payment_intent.succeeded"). Every type the platform writes
// is in EventCatalog; the channel lists (merchant webhooks, app events) derive from it.
type EventType string

// Channel is a delivery channel of events (D10). A catalog entry names the channels that carry
// its type; an event of a type no channel carries is still written to the outbox and listed by
// GET /v1/events.
type Channel uint8

const (
	// ChannelMerchant is merchant webhooks: interface 6.1 plus checkout.session.completed and
	// the three checkout.session.async_payment_* events (D10).
	ChannelMerchant Channel = 1 << iota
	// ChannelApp is app events: exactly the list of interface 6.2 (D10, D17).
	ChannelApp
)

// ObjectKind is the kind of object an event is about: the object of its data.object, whose id
// the outbox keeps as the event's object id, and what an app's scopes must allow it to read
// (D17).
type ObjectKind string

// The object kinds events are about.
const (
	ObjectCheckoutSession ObjectKind = "checkout.session"
	ObjectPayment         ObjectKind = "payment"
	ObjectRefund          ObjectKind = "refund"
	ObjectDispute         ObjectKind = "dispute"
	ObjectInvoice         ObjectKind = "invoice"
	ObjectSubscription    ObjectKind = "subscription"
	ObjectPayout          ObjectKind = "payout"
	// ObjectCharge is a charge of a payable that created no payment (declined at once, or
	// waiting on the shopper): what payment_intent.payment_failed and
	// payment_intent.requires_action are about when no payment exists. An app reads it under
	// the scope of payments.
	ObjectCharge ObjectKind = "charge"
	// ObjectWebhookEndpoint is the object of a merchant's test event (webhook.test), which the
	// outbox never holds: it travels in its delivery.
	ObjectWebhookEndpoint ObjectKind = "webhook_endpoint"
)

// The event types (interface 6.1 and 6.2, D9, D10).
const (
	// EventCheckoutSessionCompleted: the session is paid; fires exactly once per session, the
	// fulfilment trigger.
	EventCheckoutSessionCompleted EventType = "checkout.session.completed"
	// EventCheckoutSessionExpired: the session timed out unpaid.
	EventCheckoutSessionExpired EventType = "checkout.session.expired"
	// EventCheckoutSessionCanceled: cancelled before payment; cancellation_reason may be set.
	EventCheckoutSessionCanceled EventType = "checkout.session.canceled"
	// EventCheckoutSessionAsyncPaymentPending: a delayed method (SEPA) is processing.
	EventCheckoutSessionAsyncPaymentPending EventType = "checkout.session.async_payment_pending"
	// EventCheckoutSessionAsyncPaymentSucceeded: a delayed method succeeded.
	EventCheckoutSessionAsyncPaymentSucceeded EventType = "checkout.session.async_payment_succeeded"
	// EventCheckoutSessionAsyncPaymentFailed: a delayed method failed; failure_code and
	// failure_message.
	EventCheckoutSessionAsyncPaymentFailed EventType = "checkout.session.async_payment_failed"
	// EventCheckoutSessionRefunded: amount_refunded, fully_refunded.
	EventCheckoutSessionRefunded EventType = "checkout.session.refunded"
	// EventPaymentIntentSucceeded: funds captured; a completed checkout fires it together with
	// checkout.session.completed.
	EventPaymentIntentSucceeded EventType = "payment_intent.succeeded"
	// EventPaymentIntentPaymentFailed: failure_code, decline_code, failure_message.
	EventPaymentIntentPaymentFailed EventType = "payment_intent.payment_failed"
	// EventPaymentIntentRequiresAction: waiting on the shopper (3-D Secure).
	EventPaymentIntentRequiresAction EventType = "payment_intent.requires_action"
	// EventPaymentIntentCanceled: cancelled or abandoned.
	EventPaymentIntentCanceled EventType = "payment_intent.canceled"
	// EventChargeRefunded: a refund was issued; { charge_id, session_id, amount_refunded,
	// amount, currency, reason, fully_refunded } (6.1).
	EventChargeRefunded EventType = "charge.refunded"
	// EventChargeDisputeCreated: the buyer's bank opened a dispute (D9, D16); data.object is
	// the dispute. Merchant webhooks carry it (D16).
	EventChargeDisputeCreated EventType = "charge.dispute.created"
	// EventChargeDisputeUpdated: the merchant saved or submitted evidence (D16).
	EventChargeDisputeUpdated EventType = "charge.dispute.updated"
	// EventChargeDisputeClosed: the dispute was won or lost (D16).
	EventChargeDisputeClosed EventType = "charge.dispute.closed"
	// EventInvoiceFinalized: the invoice moved from draft to open.
	EventInvoiceFinalized EventType = "invoice.finalized"
	// EventInvoicePaid: the customer paid the invoice.
	EventInvoicePaid EventType = "invoice.paid"
	// EventInvoicePaymentFailed: an invoice payment attempt failed; for subscriptions the
	// dunning stage advanced.
	EventInvoicePaymentFailed EventType = "invoice.payment_failed"
	// EventInvoiceVoided: an open invoice was voided.
	EventInvoiceVoided EventType = "invoice.voided"
	// EventInvoiceMarkedUncollectible: the merchant marked an open invoice uncollectible. No
	// channel carries it (interface 6.1 lists no such event): it is visible in GET /v1/events.
	EventInvoiceMarkedUncollectible EventType = "invoice.marked_uncollectible"
	// EventInvoicePaymentSucceeded: a renewal was charged.
	EventInvoicePaymentSucceeded EventType = "invoice.payment_succeeded"
	// EventSubscriptionCreated: a subscription was created.
	EventSubscriptionCreated EventType = "customer.subscription.created"
	// EventSubscriptionUpdated: a subscription changed; fires when the first payment is
	// confirmed.
	EventSubscriptionUpdated EventType = "customer.subscription.updated"
	// EventSubscriptionDeleted: the subscription ended.
	EventSubscriptionDeleted EventType = "customer.subscription.deleted"
	// EventSubscriptionTrialWillEnd: three days before the trial ends.
	EventSubscriptionTrialWillEnd EventType = "customer.subscription.trial_will_end"
	// EventPayoutCreated: the daily payout run created a payout (D16).
	EventPayoutCreated EventType = "payout.created"
	// EventPayoutPaid: a payout arrived at the merchant's bank (D16).
	EventPayoutPaid EventType = "payout.paid"
)

// EventSpec is one entry of the event catalog.
type EventSpec struct {
	Type EventType
	// Channels carrying the type (a bit set; 0: the outbox only).
	Channels Channel
	// Object is the kind of object data.object is.
	Object ObjectKind
}

// On reports whether ch carries the type.
func (s EventSpec) On(ch Channel) bool { return s.Channels&ch != 0 }

// eventCatalog is the one catalog of event types. Its order is the order of the channel lists:
// filtered by channel it gives the merchant list of D10 and the app list of interface 6.2, each
// in its documented order.
var eventCatalog = []EventSpec{
	{EventCheckoutSessionCompleted, ChannelMerchant | ChannelApp, ObjectCheckoutSession},
	{EventCheckoutSessionExpired, ChannelMerchant | ChannelApp, ObjectCheckoutSession},
	{EventCheckoutSessionCanceled, ChannelApp, ObjectCheckoutSession},
	{EventCheckoutSessionAsyncPaymentPending, ChannelMerchant | ChannelApp, ObjectCheckoutSession},
	{EventCheckoutSessionAsyncPaymentSucceeded, ChannelMerchant, ObjectCheckoutSession},
	{EventCheckoutSessionAsyncPaymentFailed, ChannelMerchant | ChannelApp, ObjectCheckoutSession},
	{EventCheckoutSessionRefunded, ChannelApp, ObjectCheckoutSession},
	{EventPaymentIntentSucceeded, ChannelApp, ObjectPayment},
	{EventPaymentIntentPaymentFailed, ChannelApp, ObjectPayment},
	{EventPaymentIntentRequiresAction, ChannelApp, ObjectPayment},
	{EventPaymentIntentCanceled, ChannelApp, ObjectPayment},
	{EventChargeRefunded, ChannelMerchant, ObjectRefund},
	{EventChargeDisputeCreated, ChannelMerchant, ObjectDispute},
	{EventChargeDisputeUpdated, ChannelMerchant, ObjectDispute},
	{EventChargeDisputeClosed, ChannelMerchant, ObjectDispute},
	{EventInvoiceFinalized, ChannelMerchant, ObjectInvoice},
	{EventInvoicePaid, ChannelMerchant, ObjectInvoice},
	{EventInvoicePaymentFailed, ChannelMerchant | ChannelApp, ObjectInvoice},
	{EventInvoiceVoided, ChannelMerchant, ObjectInvoice},
	{EventInvoiceMarkedUncollectible, 0, ObjectInvoice},
	{EventInvoicePaymentSucceeded, ChannelMerchant, ObjectInvoice},
	{EventSubscriptionCreated, ChannelMerchant, ObjectSubscription},
	{EventSubscriptionUpdated, ChannelMerchant, ObjectSubscription},
	{EventSubscriptionDeleted, ChannelMerchant | ChannelApp, ObjectSubscription},
	{EventSubscriptionTrialWillEnd, ChannelMerchant, ObjectSubscription},
	{EventPayoutCreated, ChannelMerchant, ObjectPayout},
	{EventPayoutPaid, ChannelMerchant, ObjectPayout},
}

// EventCatalog returns every event type the platform writes, in catalog order.
func EventCatalog() []EventSpec { return slices.Clone(eventCatalog) }

// LookupEventType returns the catalog entry of typ.
func LookupEventType(typ string) (EventSpec, bool) {
	for _, s := range eventCatalog {
		if string(s.Type) == typ {
			return s, true
		}
	}
	return EventSpec{}, false
}

// EventTypesOn returns the event types ch carries, in catalog order (for ChannelMerchant the
// list of D10, for ChannelApp the list of interface 6.2).
func EventTypesOn(ch Channel) []string {
	var out []string
	for _, s := range eventCatalog {
		if s.On(ch) {
			out = append(out, string(s.Type))
		}
	}
	return out
}

// IsEventOn reports whether typ is in the catalog and ch carries it.
func IsEventOn(typ string, ch Channel) bool {
	s, ok := LookupEventType(typ)
	return ok && s.On(ch)
}

// AppReadScope is the App API scope an installation needs to receive an event of typ (D17):
// the scope that reads the kind of object the catalog says the type is about
// (`payments:read` for checkout.* and payment_intent.*, `invoices:read` for invoices,
// `subscriptions:read` for subscriptions). ok is false for a type outside the app channel.
func AppReadScope(typ EventType) (scope string, ok bool) {
	s, found := LookupEventType(string(typ))
	if !found || !s.On(ChannelApp) {
		return "", false
	}
	switch s.Object {
	case ObjectCheckoutSession, ObjectPayment, ObjectCharge:
		return "payments:read", true
	case ObjectRefund:
		return "refunds:read", true
	case ObjectDispute:
		return "disputes:read", true
	case ObjectInvoice:
		return "invoices:read", true
	case ObjectSubscription:
		return "subscriptions:read", true
	case ObjectPayout, ObjectWebhookEndpoint:
		// Never app events: the app catalog is the interface's list, which has no payout
		// event, and a webhook endpoint's event is a merchant's test event. The payouts:read
		// scope reads the App API's payouts, not events.
	}
	return "", false
}
