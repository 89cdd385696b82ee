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
	// ErrProcessorUnavailable: the environment has no processor that saves payment methods
	// (live, until a live adapter is configured).
	ErrProcessorUnavailable = core.NewError(core.TypeResourceConflict, "merchant_not_ready", "", "Payment methods cannot be saved in this environment yet.")
	// ErrSetupRequiresAction: the method needs the customer to authenticate (3-D Secure)
	// before it can be saved.
	ErrSetupRequiresAction = core.NewError(core.TypeInvalidState, "payment_method_requires_action", "", "The customer must authenticate this payment method before it is saved.")
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
