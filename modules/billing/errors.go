package billing

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Documented errors of customers and saved payment methods.
var (
	// ErrCustomerNotFound: no customer with that id in the merchant environment (404).
	ErrCustomerNotFound = core.NewError(core.TypeNotFound, "customer_not_found", "customer", "No such customer.")
	// ErrPaymentMethodNotFound: no saved payment method with that id for the customer (404).
	ErrPaymentMethodNotFound = core.NewError(core.TypeNotFound, "payment_method_not_found", "payment_method", "No such payment method.")
)

// Store sentinels.
var (
	// ErrNotFound: no customer with that id in the scope.
	ErrNotFound = errors.New("billing: no such customer")
	// ErrMethodNotFound: no payment method with that id in the scope.
	ErrMethodNotFound = errors.New("billing: no such payment method")
	// ErrMethodExists: a payment method with that id, or that processor reference, is kept
	// already in the scope.
	ErrMethodExists = errors.New("billing: the payment method is saved already")
)

// Documented errors of subscriptions (interface 4.2, 7).
var (
	// ErrSubscriptionNotFound: unknown or foreign subscription (404).
	ErrSubscriptionNotFound = core.NewError(core.TypeNotFound, "subscription_not_found", "id", "No such subscription.")
	// ErrAlreadyCanceled: a canceled (or expired) subscription cannot be canceled again.
	ErrAlreadyCanceled = core.NewError(core.TypeResourceConflict, "subscription_already_canceled", "", "This subscription is already canceled.")
	// ErrPriceNotRecurring: a subscription needs a recurring price.
	ErrPriceNotRecurring = core.NewError(core.TypeInvalidRequest, "price_not_recurring", "price_id", "A subscription needs a recurring price.")
	// ErrPriceInactive: an archived price cannot start a subscription.
	ErrPriceInactive = core.NewError(core.TypeInvalidRequest, "price_inactive", "price_id", "This price is archived.")
	// ErrPriceMetered: metered prices cannot be subscribed to yet.
	ErrPriceMetered = core.NewError(core.TypeInvalidRequest, "price_metered_unsupported", "price_id", "Metered prices are not supported for subscriptions.")
	// ErrSubscriptionEnded: a canceled or expired subscription takes no change.
	ErrSubscriptionEnded = core.NewError(core.TypeResourceConflict, "subscription_already_canceled", "", "This subscription has ended.")
)

// Documented errors of a subscription's first payment (browser API).
var (
	// ErrPaymentIntentState: the first payment is already confirmed, expired, or the client
	// secret does not open it (the answer never tells which).
	ErrPaymentIntentState = core.NewError(core.TypeInvalidState, "payment_intent_unexpected_state", "",
		"This payment can no longer be confirmed.")
	// ErrProcessorUnavailable: the environment has no processor that saves payment methods
	// (live, until a live adapter is configured); nothing was charged or saved.
	ErrProcessorUnavailable = core.NewError(core.TypeAPI, "processor_unavailable", "",
		"No payment processor is configured for this environment; nothing was charged.")
)

// DeclineError is a payment method the processor refused (402 card_error / card_declined);
// the subscription stays incomplete for another try.
type DeclineError struct {
	DeclineCode, Message, Param string
}

func (e *DeclineError) Error() string { return "card_declined (" + e.DeclineCode + "): " + e.Message }

// CoreError is the envelope form of the decline; the decline code travels beside it.
func (e *DeclineError) CoreError() *core.Error {
	return core.NewError(core.TypeCard, "card_declined", e.Param, e.Message)
}

// ErrSubscriptionMissing is the store's sentinel for an unknown subscription.
var ErrSubscriptionMissing = errors.New("billing: no such subscription")

// ErrUnknownCursor: a list cursor that is not a subscription of the scope.
var ErrUnknownCursor = errors.New("billing: the cursor is not a subscription of this list")
