package payments

import "github.com/kassa-pay/kassa/core"

// Event types payments writes: references into the event catalog (core.EventCatalog), which
// says which channels carry each (D10) and what object it is about.
const (
	EventCheckoutSessionCompleted             = core.EventCheckoutSessionCompleted
	EventCheckoutSessionAsyncPaymentPending   = core.EventCheckoutSessionAsyncPaymentPending
	EventCheckoutSessionAsyncPaymentSucceeded = core.EventCheckoutSessionAsyncPaymentSucceeded
	EventCheckoutSessionAsyncPaymentFailed    = core.EventCheckoutSessionAsyncPaymentFailed
	EventCheckoutSessionRefunded              = core.EventCheckoutSessionRefunded
	EventPaymentIntentSucceeded               = core.EventPaymentIntentSucceeded
	EventPaymentIntentPaymentFailed           = core.EventPaymentIntentPaymentFailed
	EventPaymentIntentRequiresAction          = core.EventPaymentIntentRequiresAction
	EventPaymentIntentCanceled                = core.EventPaymentIntentCanceled
	EventChargeRefunded                       = core.EventChargeRefunded
	// EventChargeDisputeCreated is written by the payments sweep when a dispute opens.
	EventChargeDisputeCreated = core.EventChargeDisputeCreated
	// EventChargeDisputeUpdated: evidence was saved or submitted.
	EventChargeDisputeUpdated = core.EventChargeDisputeUpdated
	// EventChargeDisputeClosed: the dispute was won or lost.
	EventChargeDisputeClosed = core.EventChargeDisputeClosed
)
