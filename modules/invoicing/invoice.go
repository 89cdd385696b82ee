package invoicing

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Status is an invoice's state (interface 3.3).
type Status string

const (
	StatusDraft         Status = "draft"
	StatusOpen          Status = "open"
	StatusPaid          Status = "paid"
	StatusVoid          Status = "void"
	StatusUncollectible Status = "uncollectible"
)

// ParseStatus reads a status filter.
func ParseStatus(s, param string) (Status, error) {
	switch st := Status(s); st {
	case StatusDraft, StatusOpen, StatusPaid, StatusVoid, StatusUncollectible:
		return st, nil
	}
	return "", core.InvalidField(param, "status must be one of draft, open, paid, void, uncollectible.")
}

// Limits of invoices (D15).
const (
	MaxLines            = 100
	MaxQuantity         = 10_000
	MaxDaysUntilDue     = 365
	DefaultDaysUntilDue = 30
	MaxDescription      = 500
	MaxMemo             = 5000
)

// Line is one line of an invoice: free-form (description, quantity, unit amount, VAT rate) or
// from the catalog (a one-time price: locked, its description and unit amount the price's).
type Line struct {
	Description string
	Quantity    int64
	UnitAmount  int64
	VATRate     Rate
	PriceID     *string
	ProductID   *string
	Locked      bool
	// Currency is the price's currency, for a catalog line ("" for a free-form line).
	Currency core.Currency
}

// Amount is the line's net amount (quantity × unit amount).
func (l Line) Amount() int64 { return l.Quantity * l.UnitAmount }

// VATAmount is the line's VAT, rounded half-up (LineVAT).
func (l Line) VATAmount() int64 { return LineVAT(l.Quantity, l.UnitAmount, l.VATRate) }

// Invoice is one invoice of a merchant environment.
type Invoice struct {
	id            string
	scope         core.Scope
	status        Status
	number        *string
	currency      core.Currency
	customerName  string
	customerEmail string
	lines         []Line
	daysUntilDue  int
	memo          *string
	metadata      map[string]string
	publicToken   *string
	issueDate     *time.Time
	dueDate       *time.Time
	amountPaid    int64
	paymentID     *string
	created       time.Time
	updated       time.Time
	finalizedAt   *time.Time
	paidAt        *time.Time
	voidedAt      *time.Time
	uncollectible *time.Time
	subscription  *string
	dunningStage  *string
	nextAttempt   *time.Time
	charge        ChargeState
	// startingBalance and endingBalance: the customer's balance before and after a
	// subscription's invoice took what it could of it (0 and 0 for a one-off invoice).
	startingBalance, endingBalance int64
}

// ChargeState is the invoice's side of the charge protocol: the attempt in flight, the number
// of attempts made, a charge waiting for the customer (3-D Secure), and a delayed payment
// (SEPA) being settled.
type ChargeState struct {
	Charging   string                   // the idempotency key of the attempt in flight, or ""
	Attempts   int                      // attempts made (the last attempt's number)
	Pending    *payments.CustomerAction // a charge waiting for 3-D Secure
	Processing string                   // the id of a processing payment, or ""
	// ProcessingOffSession: the processing payment was charged off-session (a renewal or its
	// automatic retry), not by the customer on the hosted page.
	ProcessingOffSession bool
	// SavedMethod is the method (billing's pm_…) the customer saved for the current charge on
	// the hosted page: it becomes the subscription's default when that charge pays the
	// invoice. Each new charge sets it ("" for an automatic charge or a one-off invoice).
	SavedMethod string
}

// Snapshot is the invoice's full state, for storage.
type Snapshot struct {
	ID            string
	Scope         core.Scope
	Status        Status
	Number        *string
	Currency      core.Currency
	CustomerName  string
	CustomerEmail string
	Lines         []Line
	DaysUntilDue  int
	Memo          *string
	Metadata      map[string]string
	PublicToken   *string
	IssueDate     *time.Time
	DueDate       *time.Time
	AmountPaid    int64
	PaymentID     *string
	Created       time.Time
	Updated       time.Time
	FinalizedAt   *time.Time
	PaidAt        *time.Time
	VoidedAt      *time.Time
	Uncollectible *time.Time
	// Subscription is the subscription the invoice bills (sub_…), nil for a one-off invoice.
	Subscription *string
	// DunningStage and NextPaymentAttempt: where the collection of a subscription's invoice
	// stands after a failed automatic charge (nil until one fails).
	DunningStage       *string
	NextPaymentAttempt *time.Time
	Charge             ChargeState
	// StartingBalance and EndingBalance: the customer's balance before and after the invoice
	// (a subscription's); AmountDue is the total + StartingBalance − EndingBalance.
	StartingBalance, EndingBalance int64
}

// Snapshot returns a copy of the full state.
func (i *Invoice) Snapshot() Snapshot {
	return Snapshot{ID: i.id, Scope: i.scope, Status: i.status, Number: i.number, Currency: i.currency,
		CustomerName: i.customerName, CustomerEmail: i.customerEmail, Lines: slices.Clone(i.lines),
		DaysUntilDue: i.daysUntilDue, Memo: i.memo, Metadata: maps.Clone(i.metadata), PublicToken: i.publicToken,
		IssueDate: i.issueDate, DueDate: i.dueDate, AmountPaid: i.amountPaid, PaymentID: i.paymentID,
		Created: i.created, Updated: i.updated, FinalizedAt: i.finalizedAt, PaidAt: i.paidAt, VoidedAt: i.voidedAt,
		Uncollectible: i.uncollectible, Subscription: i.subscription,
		DunningStage: i.dunningStage, NextPaymentAttempt: i.nextAttempt, Charge: i.charge,
		StartingBalance: i.startingBalance, EndingBalance: i.endingBalance}
}

// Rehydrate rebuilds an invoice from storage, without re-validating.
func Rehydrate(s Snapshot) *Invoice {
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	return &Invoice{id: s.ID, scope: s.Scope, status: s.Status, number: s.Number, currency: s.Currency,
		customerName: s.CustomerName, customerEmail: s.CustomerEmail, lines: slices.Clone(s.Lines),
		daysUntilDue: s.DaysUntilDue, memo: s.Memo, metadata: maps.Clone(s.Metadata), publicToken: s.PublicToken,
		issueDate: s.IssueDate, dueDate: s.DueDate, amountPaid: s.AmountPaid, paymentID: s.PaymentID,
		created: s.Created, updated: s.Updated, finalizedAt: s.FinalizedAt, paidAt: s.PaidAt, voidedAt: s.VoidedAt,
		uncollectible: s.Uncollectible, subscription: s.Subscription,
		dunningStage: s.DunningStage, nextAttempt: s.NextPaymentAttempt, charge: s.Charge,
		startingBalance: s.StartingBalance, endingBalance: s.EndingBalance}
}

// Draft is the validated content of a draft: what create and update set.
type Draft struct {
	Currency      core.Currency
	CustomerName  string
	CustomerEmail string
	Lines         []Line
	DaysUntilDue  int
	Memo          *string
	Metadata      map[string]string
}

// NewDraft starts a draft invoice with validated content d.
func NewDraft(scope core.Scope, d Draft, now time.Time) *Invoice {
	inv := &Invoice{id: core.NewID(core.PrefixInvoice), scope: scope, status: StatusDraft, created: now, updated: now}
	inv.set(d)
	return inv
}

func (i *Invoice) set(d Draft) {
	i.currency, i.customerName, i.customerEmail = d.Currency, d.CustomerName, d.CustomerEmail
	i.lines, i.daysUntilDue, i.memo, i.metadata = slices.Clone(d.Lines), d.DaysUntilDue, d.Memo, maps.Clone(d.Metadata)
	if i.metadata == nil {
		i.metadata = map[string]string{}
	}
}

// Content is the draft content of the invoice (the base an update applies to).
func (i *Invoice) Content() Draft {
	return Draft{Currency: i.currency, CustomerName: i.customerName, CustomerEmail: i.customerEmail,
		Lines: slices.Clone(i.lines), DaysUntilDue: i.daysUntilDue, Memo: i.memo, Metadata: maps.Clone(i.metadata)}
}

// Edit replaces the draft's content: drafts only (ErrNotDraft).
func (i *Invoice) Edit(d Draft, now time.Time) error {
	if i.status != StatusDraft {
		return ErrNotDraft
	}
	i.set(d)
	i.updated = now
	return nil
}

// CheckDeletable: only drafts are deleted.
func (i *Invoice) CheckDeletable() error {
	if i.status != StatusDraft {
		return ErrNotDraft
	}
	return nil
}

// Finalize sends the draft: its total must be at least the minimum charge (400
// amount_below_minimum) and at most the maximum; it takes number n of the prefix and year of
// now, and the public token. The caller takes n in the same unit of work (NextNumber), after
// CheckSendable, so that a refused send consumes no number.
func (i *Invoice) Finalize(prefix string, n int64, token string, now time.Time) error {
	if err := i.CheckSendable(); err != nil {
		return err
	}
	num := FormatNumber(prefix, now.Year(), n)
	i.number, i.publicToken = &num, &token
	i.status = StatusOpen
	issue := now
	due := now.AddDate(0, 0, i.daysUntilDue)
	i.issueDate, i.dueDate, i.finalizedAt = &issue, &due, &issue
	i.updated = now
	return nil
}

// CheckSendable checks that the draft may be sent.
func (i *Invoice) CheckSendable() error {
	if i.status != StatusDraft {
		return ErrNotDraft
	}
	return core.CheckAmountIn(i.Total(), i.currency, "total_amount")
}

// FormatNumber is <PREFIX>-INV-<year>-<sequence>, the sequence zero-padded to 4.
func FormatNumber(prefix string, year int, n int64) string {
	return fmt.Sprintf("%s-INV-%d-%04d", prefix, year, n)
}

// DefaultPrefix is the number prefix of a merchant that chose none: the first four letters or
// digits of its name, upper case, padded with X.
func DefaultPrefix(merchantName string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(merchantName) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			if b.Len() == 4 {
				break
			}
		}
	}
	for b.Len() < 4 {
		b.WriteByte('X')
	}
	return b.String()
}

// Void voids an open or uncollectible invoice with no payment in progress.
func (i *Invoice) Void(now time.Time) error {
	if i.status != StatusOpen && i.status != StatusUncollectible {
		return ErrNotOpen
	}
	if i.charge.Charging != "" || i.charge.Processing != "" {
		return ErrPaymentInProgress
	}
	i.status, i.voidedAt, i.updated = StatusVoid, &now, now
	i.charge.Pending, i.nextAttempt = nil, nil
	return nil
}

// MarkUncollectible marks an open invoice uncollectible; it can still be paid or voided.
func (i *Invoice) MarkUncollectible(now time.Time) error {
	if i.status != StatusOpen {
		return ErrNotOpen
	}
	i.status, i.uncollectible, i.updated = StatusUncollectible, &now, now
	return nil
}

// Payable reports whether the invoice takes a payment now (open or uncollectible).
func (i *Invoice) Payable() bool { return i.status == StatusOpen || i.status == StatusUncollectible }

// startCharge checks that a new attempt may start and marks it in flight; it returns the
// attempt's number.
func (i *Invoice) startCharge(kind payments.AttemptKind, savedMethod string, now time.Time) (int, error) {
	if !i.Payable() {
		return 0, ErrNotOpen
	}
	if i.charge.Charging != "" {
		return 0, payments.ErrChargeInProgress
	}
	if i.charge.Processing != "" {
		return 0, ErrPaymentInProgress
	}
	if kind == payments.AttemptCharge {
		i.charge.Pending = nil // a new charge abandons one left waiting for 3-D Secure
		i.charge.SavedMethod = savedMethod
	}
	i.charge.Attempts++
	i.charge.Charging = payments.AttemptKey(i.id, i.charge.Attempts)
	i.updated = now
	return i.charge.Attempts, nil
}

func (i *Invoice) stopCharge(key string) error {
	if i.charge.Charging != key {
		return fmt.Errorf("invoicing: %s: attempt %s is not the charge in flight (%q)", i.id, key, i.charge.Charging)
	}
	i.charge.Charging = ""
	return nil
}

// markPaid records the succeeded payment pay.
func (i *Invoice) markPaid(pay *payments.Payment, at time.Time) {
	id := pay.ID()
	i.status, i.paymentID, i.paidAt, i.updated = StatusPaid, &id, &at, at
	i.amountPaid = pay.Amount()
	i.charge.Pending, i.charge.Processing, i.charge.ProcessingOffSession = nil, "", false
	i.nextAttempt = nil
}

// Getters.
func (i *Invoice) ID() string                     { return i.id }
func (i *Invoice) Scope() core.Scope              { return i.scope }
func (i *Invoice) Status() Status                 { return i.status }
func (i *Invoice) Number() *string                { return i.number }
func (i *Invoice) Currency() core.Currency        { return i.currency }
func (i *Invoice) CustomerName() string           { return i.customerName }
func (i *Invoice) CustomerEmail() string          { return i.customerEmail }
func (i *Invoice) Lines() []Line                  { return slices.Clone(i.lines) }
func (i *Invoice) DaysUntilDue() int              { return i.daysUntilDue }
func (i *Invoice) Memo() *string                  { return i.memo }
func (i *Invoice) Metadata() map[string]string    { return maps.Clone(i.metadata) }
func (i *Invoice) PublicToken() *string           { return i.publicToken }
func (i *Invoice) IssueDate() *time.Time          { return i.issueDate }
func (i *Invoice) DueDate() *time.Time            { return i.dueDate }
func (i *Invoice) AmountPaid() int64              { return i.amountPaid }
func (i *Invoice) PaymentID() *string             { return i.paymentID }
func (i *Invoice) Created() time.Time             { return i.created }
func (i *Invoice) Updated() time.Time             { return i.updated }
func (i *Invoice) PaidAt() *time.Time             { return i.paidAt }
func (i *Invoice) VoidedAt() *time.Time           { return i.voidedAt }
func (i *Invoice) AttemptCount() int              { return i.charge.Attempts }
func (i *Invoice) Subscription() *string          { return i.subscription }
func (i *Invoice) DunningStage() *string          { return i.dunningStage }
func (i *Invoice) NextPaymentAttempt() *time.Time { return i.nextAttempt }
func (i *Invoice) Processing() bool               { return i.charge.Processing != "" }
func (i *Invoice) AwaitsAction() bool             { return i.charge.Pending != nil }

// Totals are the invoice's sums.
func (i *Invoice) Totals() Totals { return TotalsOf(i.lines) }

// Total is the sum including VAT.
func (i *Invoice) Total() int64 { return i.Totals().Total }

// AmountDue is what is left to pay: the total of a draft, open or uncollectible invoice with
// the customer's balance it took (total + starting balance − ending balance), 0 once paid or
// void.
func (i *Invoice) AmountDue() int64 {
	switch i.status {
	case StatusPaid, StatusVoid:
		return 0
	case StatusDraft, StatusOpen, StatusUncollectible:
	}
	return i.Total() + i.startingBalance - i.endingBalance - i.amountPaid
}

// StartingBalance is the customer's balance before the invoice took from it (negative:
// credit); EndingBalance is what was left after.
func (i *Invoice) StartingBalance() int64 { return i.startingBalance }
func (i *Invoice) EndingBalance() int64   { return i.endingBalance }

// TookBalance reports whether the invoice met a customer balance (its starting or ending
// balance is not zero): its documents then show the applied balance between the total and
// the amount due.
func (i *Invoice) TookBalance() bool { return i.startingBalance != 0 || i.endingBalance != 0 }

// AppliedBalance is what the customer's balance did to the invoice: negative when credit was
// taken (it lowers the amount to pay), positive when an amount owed was added. The total plus
// the applied balance is what the invoice asks to be paid (starting − ending balance).
func (i *Invoice) AppliedBalance() int64 { return i.startingBalance - i.endingBalance }

// paidByBalance records an open invoice whose amount due the customer's balance covered
// whole: paid at, with no payment and nothing paid.
func (i *Invoice) paidByBalance(at time.Time) {
	i.status, i.paidAt, i.updated = StatusPaid, &at, at
	i.nextAttempt = nil
}

// Payable (payments.Payable): the amount charged is what is due.

// Amount is the amount a charge takes.
func (i *Invoice) Amount() int64 { return i.AmountDue() }

// Reference is the invoice number.
func (i *Invoice) Reference() *string { return i.number }

// Description is shown on receipts: "Invoice <number>".
func (i *Invoice) Description() *string {
	if i.number == nil {
		return nil
	}
	d := "Invoice " + *i.number
	return &d
}

var _ payments.Payable = (*Invoice)(nil)
