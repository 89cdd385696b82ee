package payments

// Event types of payments (D10, interface 6.1 and 6.2). Which channel carries which type is
// the webhook catalog's decision (D10: merchant webhooks get 6.1 plus checkout.session.completed
// and the three async_payment events; apps get exactly 6.2); the channels are noted here so a
// reader need not look it up.
const (
	// EventCheckoutSessionCompleted: the session is paid; fires exactly once per session, the
	// fulfilment trigger. Merchant (D10) and app (6.2).
	EventCheckoutSessionCompleted = "checkout.session.completed"
	// EventCheckoutSessionAsyncPaymentPending: a delayed method (SEPA) is processing.
	// Merchant (D10) and app (6.2).
	EventCheckoutSessionAsyncPaymentPending = "checkout.session.async_payment_pending"
	// EventCheckoutSessionAsyncPaymentSucceeded: a delayed method succeeded. Merchant only (D10).
	EventCheckoutSessionAsyncPaymentSucceeded = "checkout.session.async_payment_succeeded"
	// EventCheckoutSessionAsyncPaymentFailed: a delayed method failed; carries failure_code and
	// failure_message. Merchant (D10) and app (6.2).
	EventCheckoutSessionAsyncPaymentFailed = "checkout.session.async_payment_failed"
	// EventCheckoutSessionRefunded: amount_refunded, fully_refunded. App only (6.2).
	EventCheckoutSessionRefunded = "checkout.session.refunded"
	// EventPaymentIntentSucceeded: funds captured. App only (6.2); a completed checkout fires it
	// together with checkout.session.completed.
	EventPaymentIntentSucceeded = "payment_intent.succeeded"
	// EventPaymentIntentPaymentFailed: failure_code, decline_code, failure_message. App only (6.2).
	EventPaymentIntentPaymentFailed = "payment_intent.payment_failed"
	// EventPaymentIntentRequiresAction: waiting on the shopper (3-D Secure). App only (6.2).
	EventPaymentIntentRequiresAction = "payment_intent.requires_action"
	// EventPaymentIntentCanceled: cancelled or abandoned. App only (6.2).
	EventPaymentIntentCanceled = "payment_intent.canceled"
	// EventChargeRefunded: a refund was issued; payload { charge_id, session_id,
	// amount_refunded, amount, currency, reason, fully_refunded } (6.1). Merchant only.
	EventChargeRefunded = "charge.refunded"
)

// Event types of the payments sweep (D9). charge.dispute.created is an outbox event (visible
// in /v1/events); which webhook channel carries it is the webhook catalog's decision.
const (
	// EventChargeDisputeCreated: the buyer's bank opened a dispute; data.object is the dispute.
	EventChargeDisputeCreated = "charge.dispute.created"
)
