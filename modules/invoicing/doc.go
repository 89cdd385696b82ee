// Package invoicing is one-off invoices (interface 2.6 and 3.3): drafts with free-form and
// catalog lines, VAT per line in exact integer arithmetic, sending (finalising) with a
// gap-free number per merchant, environment and year and a public token for the hosted
// invoice page, voiding, marking uncollectible, and paying through the charge protocol of
// payments (an invoice is a payable of kind "invoice"; Payables is its owner).
//
// Numbering is gap-free because the number is taken in the send's unit of work: the counter
// row of (merchant, environment, year) is incremented and read back in one statement
// (InvoiceRepository.NextNumber), which holds the row's lock until the send commits or rolls
// back. Two sends of one merchant, environment and year queue on that row; nothing else does.
package invoicing
