package invoicing

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Documented errors of invoices.
var (
	// ErrInvoiceNotFound: no invoice with that id in the merchant environment (404).
	ErrInvoiceNotFound = core.NewError(core.TypeNotFound, "invoice_not_found", "id", "No such invoice.")
	// ErrNotDraft: only a draft is edited, deleted or sent.
	ErrNotDraft = core.NewError(core.TypeInvalidState, "invoice_not_draft", "", "Only a draft invoice can be changed, deleted or sent.")
	// ErrNotOpen: only an open (or, for void and payment, uncollectible) invoice moves on.
	ErrNotOpen = core.NewError(core.TypeInvalidState, "invoice_not_open", "", "This invoice is not open.")
	// ErrPaymentInProgress: a payment of the invoice is being made or settled; it can be
	// voided or paid again only once that ends.
	ErrPaymentInProgress = core.NewError(core.TypeInvalidState, "invoice_payment_in_progress", "", "A payment of this invoice is in progress.")
	// ErrCurrencyMismatch: a catalog line in another currency than the invoice's.
	ErrCurrencyMismatch = core.NewError(core.TypeInvalidRequest, "currency_mismatch", "", "All lines of an invoice are in the invoice currency.")
	// ErrPriceRecurring: a recurring price cannot be a line of a one-off invoice.
	ErrPriceRecurring = core.NewError(core.TypeInvalidRequest, "price_recurring", "", "Recurring prices cannot be added to an invoice.")
	// ErrPriceInactive: an archived price cannot be added.
	ErrPriceInactive = core.NewError(core.TypeInvalidRequest, "price_inactive", "", "This price is archived.")
	// ErrLineLocked: a catalog line takes its description and unit amount from the price.
	ErrLineLocked = core.NewError(core.TypeInvalidRequest, "line_item_locked", "", "A catalog line takes its description and unit amount from its price.")
	// ErrTooManyLines: at most MaxLines lines.
	ErrTooManyLines = core.NewError(core.TypeInvalidRequest, "line_items_invalid", "line_items", "An invoice has at most 100 lines.")
	// ErrHostedNotFound: no sent invoice with that public token (the hosted page and its API).
	ErrHostedNotFound = core.NewError(core.TypeNotFound, "invoice_not_found", "", "No such invoice.")
)

// Store sentinels.
var (
	// ErrNotFound: no invoice with that id (or token) in the scope.
	ErrNotFound = errors.New("invoicing: no such invoice")
	// ErrUnknownCursor: a list cursor that is not an invoice of the list.
	ErrUnknownCursor = errors.New("invoicing: the cursor is not an invoice of this list")
)
