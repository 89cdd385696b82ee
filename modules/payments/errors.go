package payments

import "github.com/kassa-pay/kassa/core"

// Domain errors of payments (interface 3.2 and 7, D9). They match with errors.Is on type and
// code whatever the param or message.
var (
	// ErrChargeDisputed: a refund while the payment is disputed (interface 3.2, D9).
	ErrChargeDisputed = core.NewError(core.TypeInvalidState, "charge_disputed", "",
		"This charge is disputed; it cannot be refunded.")
	// ErrRefundWindowPassed: a refund more than RefundWindow after the charge (D9, interface 8).
	ErrRefundWindowPassed = core.NewError(core.TypeInvalidState, "charge_refund_window_passed", "",
		"Charges can be refunded only within 180 days.")
	// ErrRefundExceedsCaptured: a refund above the amount not yet refunded (D9).
	ErrRefundExceedsCaptured = core.NewError(core.TypeAmountTooLarge, "refund_exceeds_captured", "amount",
		"The refund is larger than the amount that remains to be refunded.")
	// ErrRefundAmountInvalid: a refund amount of zero or less.
	ErrRefundAmountInvalid = core.NewError(core.TypeInvalidRequest, "amount_invalid", "amount",
		"The refund amount must be a positive integer in minor units.")
	// ErrRefundReasonInvalid: a refund reason outside RefundReasons.
	ErrRefundReasonInvalid = core.NewError(core.TypeInvalidRequest, "reason_invalid", "reason",
		"The reason must be requested_by_customer, duplicate or fraudulent.")
	// ErrRefundProcessorUnavailable: no processor can refund in the payment's environment
	// (live, while no live processor adapter is configured); nothing was recorded.
	ErrRefundProcessorUnavailable = core.NewError(core.TypeAPI, "processor_unavailable", "",
		"Refunds in this environment need a processor adapter, and this Kassa server has none configured; nothing was refunded.")
	// ErrRefundNotFound: no refund with that id in the scope.
	ErrRefundNotFound = core.NewError(core.TypeNotFound, "refund_not_found", "id", "No such refund.")
	// ErrChargeNotRefundable: a refund of a payment that is not succeeded or partially
	// refunded: processing, failed, or refunded in full already (D16).
	ErrChargeNotRefundable = core.NewError(core.TypeInvalidState, "charge_not_refundable", "",
		"Only a succeeded charge can be refunded.")
	// ErrPaymentNotProcessing: succeed or fail a payment that is no longer processing.
	ErrPaymentNotProcessing = core.NewError(core.TypeInvalidState, "payment_not_processing", "",
		"This payment is no longer processing.")
	// ErrChargeNotDisputable: a dispute on a payment that is not succeeded or partially refunded.
	ErrChargeNotDisputable = core.NewError(core.TypeInvalidState, "charge_not_disputable", "",
		"Only a succeeded or partially refunded charge can be disputed.")
	// ErrDisputeNotOpen: winning or losing a dispute that is not open.
	ErrDisputeNotOpen = core.NewError(core.TypeInvalidState, "dispute_not_open", "",
		"This charge has no open dispute.")
)
