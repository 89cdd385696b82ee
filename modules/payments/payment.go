package payments

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Status is the state of a payment (interface 3.2, D9).
type Status string

const (
	StatusProcessing        Status = "processing"
	StatusSucceeded         Status = "succeeded"
	StatusFailed            Status = "failed"
	StatusPartiallyRefunded Status = "partially_refunded"
	StatusRefunded          Status = "refunded"
	StatusDisputed          Status = "disputed"
)

// Valid reports whether st is one of the six documented states.
func (st Status) Valid() bool {
	switch st {
	case StatusProcessing, StatusSucceeded, StatusFailed, StatusPartiallyRefunded, StatusRefunded, StatusDisputed:
		return true
	}
	return false
}

// PaymentMethod is the payment's `payment_method` (D6).
type PaymentMethod string

const (
	MethodCard      PaymentMethod = "card"
	MethodSEPADebit PaymentMethod = "sepa_debit"
)

// Valid reports whether m is a supported method.
func (m PaymentMethod) Valid() bool { return m == MethodCard || m == MethodSEPADebit }

// RefundWindow is how long after the charge a refund is accepted (interface 8, D9): a refund
// at exactly created + 180 days is still accepted, one a second later is not.
const RefundWindow = 180 * 24 * time.Hour

// Card is what Kassa keeps of a card (D6: never more than brand, last4, country, funding).
type Card struct {
	Brand   string // visa, mastercard, amex, …
	Last4   string // four digits
	Country string // issuing country, ISO alpha-2, upper case
	Funding string // credit, debit, prepaid, unknown
}

// Customer is the payer as the session named them.
type Customer struct {
	Name  string
	Email string
}

// Payment is the payment aggregate (interface 2.2). It is created by NewPayment when a session
// completes (or, later, an invoice is paid) or rebuilt from storage by RehydratePayment, and it
// changes state only through its transition methods (D9):
//
//	processing ─Succeed→ succeeded          processing ─Fail→ failed
//	succeeded | partially_refunded ─OpenDispute→ disputed (the state before is remembered)
//	disputed ─WinDispute→ the state before the dispute
//	disputed ─LoseDispute→ disputed (for good)
//	succeeded | partially_refunded ─Refund→ partially_refunded | refunded
type Payment struct {
	id             string
	scope          core.Scope
	payableKind    PayableKind
	sessionID      *string
	invoiceID      *string
	amount         int64
	amountRefunded int64
	currency       core.Currency
	status         Status
	method         PaymentMethod
	card           *Card
	fee            Fee
	customer       Customer
	reference      *string
	metadata       map[string]string
	failureCode    *string
	failureMessage *string
	// statusBeforeDispute is the state an open dispute returns to when won; "" when no
	// dispute is open.
	statusBeforeDispute Status
	disputeLost         bool
	created             time.Time
}

// PaymentSnapshot is the full state of a payment as storage keeps it: Snapshot to save,
// RehydratePayment to load.
type PaymentSnapshot struct {
	ID                  string
	Scope               core.Scope
	PayableKind         PayableKind
	SessionID           *string
	InvoiceID           *string
	Amount              int64
	AmountRefunded      int64
	Currency            core.Currency
	Status              Status
	PaymentMethod       PaymentMethod
	Card                *Card
	Fee                 Fee
	Customer            Customer
	Reference           *string
	Metadata            map[string]string
	FailureCode         *string
	FailureMessage      *string
	StatusBeforeDispute Status
	DisputeLost         bool
	Created             time.Time
}

// RehydratePayment rebuilds a payment from storage without re-validating it: what was stored
// was valid when it was stored.
func RehydratePayment(s PaymentSnapshot) *Payment {
	return &Payment{
		id: s.ID, scope: s.Scope, payableKind: s.PayableKind, sessionID: s.SessionID, invoiceID: s.InvoiceID, amount: s.Amount,
		amountRefunded: s.AmountRefunded, currency: s.Currency, status: s.Status, method: s.PaymentMethod,
		card: cloneCard(s.Card), fee: s.Fee, customer: s.Customer, reference: s.Reference,
		metadata: maps.Clone(s.Metadata), failureCode: s.FailureCode, failureMessage: s.FailureMessage,
		statusBeforeDispute: s.StatusBeforeDispute, disputeLost: s.DisputeLost, created: s.Created,
	}
}

// Snapshot returns the payment's full state for storage.
func (p *Payment) Snapshot() PaymentSnapshot {
	return PaymentSnapshot{
		ID: p.id, Scope: p.scope, PayableKind: p.payableKind, SessionID: p.sessionID, InvoiceID: p.invoiceID, Amount: p.amount,
		AmountRefunded: p.amountRefunded, Currency: p.currency, Status: p.status, PaymentMethod: p.method,
		Card: cloneCard(p.card), Fee: p.fee, Customer: p.customer, Reference: p.reference,
		Metadata: maps.Clone(p.metadata), FailureCode: p.failureCode, FailureMessage: p.failureMessage,
		StatusBeforeDispute: p.statusBeforeDispute, DisputeLost: p.disputeLost, Created: p.created,
	}
}

// NewPaymentParams are the inputs of a new payment. They come from a completed session (or a
// paid invoice) and the processor's answer, not from a request, so a bad value is a bug: the
// constructor answers a plain error (an opaque 500), never a client error.
type NewPaymentParams struct {
	Scope core.Scope
	// PayableKind is the kind of what is paid; its owner applies the payment's settlement.
	PayableKind PayableKind
	// Exactly one of SessionID (cs_…) and InvoiceID is set: the field the kind links.
	SessionID *string
	InvoiceID *string
	Amount    int64
	Currency  core.Currency
	// Status is the processor's first answer: succeeded (cards) or processing (SEPA).
	Status    Status
	Method    PaymentMethod
	Card      *Card // required for cards, nil for SEPA
	Fee       Fee   // from FeeCalculator; its currency is the payment's
	Customer  Customer
	Reference *string
	Metadata  map[string]string
	Created   time.Time
}

// NewPayment checks p and creates the payment with a fresh py_ id.
func NewPayment(p NewPaymentParams) (*Payment, error) {
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("payments: new payment: %w", err)
	}
	card := cloneCard(p.Card)
	if card != nil {
		card.Country = upperASCII(card.Country)
	}
	return &Payment{
		id: core.NewID(core.PrefixPayment), scope: p.Scope, payableKind: p.PayableKind, sessionID: p.SessionID, invoiceID: p.InvoiceID,
		amount: p.Amount, currency: p.Currency, status: p.Status, method: p.Method, card: card,
		fee: p.Fee, customer: p.Customer, reference: p.Reference, metadata: maps.Clone(p.Metadata),
		created: p.Created,
	}, nil
}

func (p NewPaymentParams) check() error {
	switch {
	case p.Scope.MerchantID == "" || !p.Scope.Env.Valid():
		return errors.New("scope is incomplete")
	case p.PayableKind == "":
		return errors.New("the payable kind is missing")
	case (p.SessionID == nil) == (p.InvoiceID == nil):
		return errors.New("exactly one of session id and invoice id is required")
	case p.SessionID != nil && !core.HasIDShape(*p.SessionID, core.PrefixSession):
		return fmt.Errorf("session id %q is not a cs_ id", *p.SessionID)
	case p.InvoiceID != nil && *p.InvoiceID == "":
		return errors.New("empty invoice id")
	case p.Status != StatusSucceeded && p.Status != StatusProcessing:
		return fmt.Errorf("a payment starts succeeded or processing, not %q", p.Status)
	case !p.Method.Valid():
		return fmt.Errorf("unknown payment method %q", p.Method)
	case (p.Method == MethodCard) != (p.Card != nil):
		return errors.New("card details are required for cards and only for cards")
	case p.Fee.Currency != p.Currency:
		return fmt.Errorf("fee currency %s differs from the payment's %s", p.Fee.Currency, p.Currency)
	case p.Fee.ServiceFeeEUR < 0 || p.Fee.PSPFeeEUR < 0 || p.Fee.ServiceFeeChargeCurrency < 0:
		return errors.New("negative fee")
	case p.Created.IsZero():
		return errors.New("creation time is missing")
	}
	if _, err := core.ParseCurrency(string(p.Currency), "currency"); err != nil {
		return err
	}
	if err := core.CheckAmountIn(p.Amount, p.Currency, "amount"); err != nil {
		return err
	}
	if c := p.Card; c != nil {
		switch {
		case c.Brand == "":
			return errors.New("card brand is missing")
		case !isLast4(c.Last4):
			return fmt.Errorf("card last4 %q is not four digits", c.Last4)
		case !isCountryCode(c.Country):
			return fmt.Errorf("card country %q is not an ISO alpha-2 code", c.Country)
		case c.Funding != "credit" && c.Funding != "debit" && c.Funding != "prepaid" && c.Funding != "unknown":
			return fmt.Errorf("card funding %q is not credit, debit, prepaid or unknown", c.Funding)
		}
	}
	return nil
}

func isLast4(s string) bool {
	if len(s) != 4 {
		return false
	}
	for i := 0; i < 4; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func cloneCard(c *Card) *Card {
	if c == nil {
		return nil
	}
	cp := *c
	return &cp
}

func (p *Payment) ID() string                    { return p.id }
func (p *Payment) Scope() core.Scope             { return p.scope }
func (p *Payment) Environment() core.Environment { return p.scope.Env }
func (p *Payment) PayableKind() PayableKind      { return p.payableKind }
func (p *Payment) SessionID() *string            { return p.sessionID }
func (p *Payment) InvoiceID() *string            { return p.invoiceID }
func (p *Payment) Amount() int64                 { return p.amount }
func (p *Payment) AmountRefunded() int64         { return p.amountRefunded }
func (p *Payment) Currency() core.Currency       { return p.currency }
func (p *Payment) Status() Status                { return p.status }
func (p *Payment) PaymentMethod() PaymentMethod  { return p.method }
func (p *Payment) Card() *Card                   { return cloneCard(p.card) }
func (p *Payment) Fee() Fee                      { return p.fee }
func (p *Payment) Customer() Customer            { return p.customer }
func (p *Payment) Reference() *string            { return p.reference }
func (p *Payment) Metadata() map[string]string   { return maps.Clone(p.metadata) }
func (p *Payment) FailureCode() *string          { return p.failureCode }
func (p *Payment) FailureMessage() *string       { return p.failureMessage }
func (p *Payment) Created() time.Time            { return p.created }

// PayableID is the id of what the payment pays (its session_id or invoice_id).
func (p *Payment) PayableID() string {
	if p.sessionID != nil {
		return *p.sessionID
	}
	if p.invoiceID != nil {
		return *p.invoiceID
	}
	return ""
}

// StatusBeforeDispute is the state a won dispute returns to; "" when no dispute is open.
func (p *Payment) StatusBeforeDispute() Status { return p.statusBeforeDispute }

// DisputeOpen reports whether a dispute is open (disputed and not yet lost).
func (p *Payment) DisputeOpen() bool { return p.status == StatusDisputed && !p.disputeLost }

// DisputeLost reports whether a dispute was lost; the payment then stays disputed.
func (p *Payment) DisputeLost() bool { return p.disputeLost }

// AmountRefundable is what remains to be refunded.
func (p *Payment) AmountRefundable() int64 { return p.amount - p.amountRefunded }

// Succeed records that a processing (delayed-method) payment succeeded.
func (p *Payment) Succeed() error {
	if p.status != StatusProcessing {
		return ErrPaymentNotProcessing
	}
	p.status = StatusSucceeded
	return nil
}

// Fail records that a processing payment failed, with the processor's failure code and
// message (reported by checkout.session.async_payment_failed).
func (p *Payment) Fail(code, message string) error {
	if p.status != StatusProcessing {
		return ErrPaymentNotProcessing
	}
	p.status = StatusFailed
	p.failureCode, p.failureMessage = &code, &message
	return nil
}

// OpenDispute moves a succeeded or partially refunded payment to disputed and remembers the
// state to return to if the dispute is won.
func (p *Payment) OpenDispute() error {
	if p.status != StatusSucceeded && p.status != StatusPartiallyRefunded {
		return ErrChargeNotDisputable
	}
	p.statusBeforeDispute = p.status
	p.status = StatusDisputed
	return nil
}

// WinDispute closes an open dispute in the merchant's favour: the payment returns to the
// state it had before the dispute.
func (p *Payment) WinDispute() error {
	if !p.DisputeOpen() {
		return ErrDisputeNotOpen
	}
	p.status = p.statusBeforeDispute
	p.statusBeforeDispute = ""
	return nil
}

// LoseDispute closes an open dispute in the cardholder's favour: the payment stays disputed
// for good (no refund, no second dispute).
func (p *Payment) LoseDispute() error {
	if !p.DisputeOpen() {
		return ErrDisputeNotOpen
	}
	p.disputeLost = true
	p.statusBeforeDispute = ""
	return nil
}

// RefundOutcome is what a refund changed.
type RefundOutcome struct {
	// Amount is this refund, in minor units of the payment's currency.
	Amount int64
	// AmountRefunded is the running total after this refund.
	AmountRefunded int64
	// FullyRefunded is true when nothing remains to refund (charge.refunded fully_refunded).
	FullyRefunded bool
	// FeeReversed is the part of the locked fee this refund gives back (pro rata,
	// interface 3.2). It is computed on the running total so that the parts of several partial
	// refunds add up exactly to the whole fee: reversed(total after) − reversed(total before),
	// each round(fee × refunded / amount) half-up.
	FeeReversed Fee
}

// CheckRefund checks a refund of `amount` minor units asked at `now` (interface 3.2, D9,
// D16) while `reserved` minor units are already promised to refunds not yet applied (pending
// at the processor). The checks, in order:
//
//	disputed (open or lost)              → 422 ErrChargeDisputed
//	refunded, processing or failed       → 422 ErrChargeNotRefundable
//	now later than created + 180 days    → 422 ErrRefundWindowPassed
//	amount ≤ 0                           → 400 ErrRefundAmountInvalid
//	amount above what remains (reserved
//	refunds counted as refunded already) → 400 ErrRefundExceedsCaptured
//
// It changes nothing: the refund is applied by ApplyRefund once the processor gave it back.
func (p *Payment) CheckRefund(amount, reserved int64, now time.Time) error {
	switch p.status {
	case StatusDisputed:
		return ErrChargeDisputed
	case StatusSucceeded, StatusPartiallyRefunded:
	case StatusRefunded:
		return ErrChargeNotRefundable.Msg("This charge has already been refunded in full.")
	default:
		return ErrChargeNotRefundable
	}
	if now.After(p.created.Add(RefundWindow)) {
		return ErrRefundWindowPassed
	}
	if amount <= 0 {
		return ErrRefundAmountInvalid
	}
	if remaining := p.AmountRefundable() - reserved; amount > remaining {
		if remaining < 0 {
			remaining = 0
		}
		return ErrRefundExceedsCaptured.Msg(
			"The refund of %s is larger than the %s that remains to be refunded.",
			core.FormatAmount(amount, p.currency), core.FormatAmount(remaining, p.currency))
	}
	return nil
}

// Refund checks and applies a refund of `amount` at `now` in one step (CheckRefund with
// nothing reserved, then ApplyRefund). On success the payment is partially_refunded, or
// refunded when nothing remains.
func (p *Payment) Refund(amount int64, now time.Time) (RefundOutcome, error) {
	if err := p.CheckRefund(amount, 0, now); err != nil {
		return RefundOutcome{}, err
	}
	return p.ApplyRefund(amount)
}

// ApplyRefund records a refund of `amount` that the processor has made: amount_refunded
// grows, the status becomes partially_refunded or refunded, and the fee reversed is computed
// (FeeReversal). The rules of CheckRefund were checked when the refund was asked for; what
// is checked again here is only what keeps the figures true (a positive amount, not above
// what remains). A dispute opened while the refund was at the processor keeps the payment
// disputed; the state a won dispute returns to becomes the refunded one.
func (p *Payment) ApplyRefund(amount int64) (RefundOutcome, error) {
	if amount <= 0 {
		return RefundOutcome{}, ErrRefundAmountInvalid
	}
	if amount > p.AmountRefundable() {
		return RefundOutcome{}, ErrRefundExceedsCaptured
	}
	reversed, err := FeeReversal(p.fee, p.amount, p.amountRefunded, amount)
	if err != nil {
		return RefundOutcome{}, err
	}
	p.amountRefunded += amount
	next := StatusPartiallyRefunded
	if p.amountRefunded == p.amount {
		next = StatusRefunded
	}
	switch {
	case p.status == StatusDisputed && p.statusBeforeDispute != "":
		p.statusBeforeDispute = next
	case p.status == StatusDisputed: // lost: the payment stays disputed for good
	default:
		p.status = next
	}
	return RefundOutcome{
		Amount:         amount,
		AmountRefunded: p.amountRefunded,
		FullyRefunded:  p.amountRefunded == p.amount,
		FeeReversed:    reversed,
	}, nil
}

// FeeReversal is the part of `fee` a refund of `amount` gives back, on a charge of `charged`
// of which `refundedBefore` was refunded already (interface 3.2, D16). Every part of the fee
// (service_fee_eur, psp_fee_eur, service_fee_charge_currency) is reversed pro rata, rounded
// half-up, on the running total:
//
//	reversed = round(part × (refundedBefore + amount) / charged) − round(part × refundedBefore / charged)
//
// so the refund that completes the charge reverses exactly what the earlier ones left, and
// the reversals of all refunds of a charge always sum to the fee. Each reversal is within one
// minor unit of its exact share, and never negative.
func FeeReversal(fee Fee, charged, refundedBefore, amount int64) (Fee, error) {
	if amount <= 0 || refundedBefore < 0 || refundedBefore+amount > charged {
		return Fee{}, fmt.Errorf("payments: fee reversal of %d after %d of %d", amount, refundedBefore, charged)
	}
	before, err := fee.Share(refundedBefore, charged)
	if err != nil {
		return Fee{}, err
	}
	after, err := fee.Share(refundedBefore+amount, charged)
	if err != nil {
		return Fee{}, err
	}
	return after.minus(before)
}
