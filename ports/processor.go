package ports

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// PaymentMethodKind is a payment method Kassa accepts (D6); it is the payment's
// `payment_method` on the wire.
type PaymentMethodKind string

const (
	MethodCard      PaymentMethodKind = "card"
	MethodSEPADebit PaymentMethodKind = "sepa_debit"
)

// Valid reports whether k is one of the accepted methods.
func (k PaymentMethodKind) Valid() bool { return k == MethodCard || k == MethodSEPADebit }

// CardDetails is what the buyer typed. It exists only for the duration of one Charge call:
// it is never stored, and it refuses to be printed, logged or JSON-encoded in full (String,
// GoString, LogValue and MarshalJSON all give the redacted form). A live adapter builds its
// own wire request from the fields.
type CardDetails struct {
	Number   string
	ExpMonth int
	ExpYear  int // four digits, or two meaning 20xx
	CVC      string
	Name     string
}

// SEPADetails is the bank account of a SEPA Direct Debit. Like CardDetails it is not stored
// (only country and last four are) and prints redacted.
type SEPADetails struct {
	IBAN          string
	AccountHolder string
}

const redacted = "[redacted]"

func (c CardDetails) String() string {
	return "card{last4=" + core.Last4(c.Number) + " number=" + redacted + " cvc=" + redacted + "}"
}
func (c CardDetails) GoString() string             { return c.String() }
func (c CardDetails) LogValue() slog.Value         { return slog.StringValue(c.String()) }
func (c CardDetails) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

func (s SEPADetails) String() string {
	return "sepa_debit{last4=" + core.Last4(s.IBAN) + " iban=" + redacted + "}"
}
func (s SEPADetails) GoString() string             { return s.String() }
func (s SEPADetails) LogValue() slog.Value         { return slog.StringValue(s.String()) }
func (s SEPADetails) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// ChargeRequest asks a processor to move money from the buyer. Exactly one source is given:
// Card (Method card), SEPA (Method sepa_debit), or PaymentMethodRef, a method saved by an
// earlier charge of the same kind (subscription renewals, D8).
type ChargeRequest struct {
	Scope     core.Scope
	Reference string // the Kassa object being paid: cs_ session or in_ invoice id
	// Amount in minor units. 0 only with SavePaymentMethod: the method is verified and saved
	// without moving money (a subscription's trial, D8).
	Amount   int64
	Currency core.Currency
	Method   PaymentMethodKind

	Card             *CardDetails
	SEPA             *SEPADetails
	PaymentMethodRef string

	// SavePaymentMethod asks for a reusable PaymentMethodRef in a succeeded result.
	SavePaymentMethod bool
	// OffSession: the buyer is not present (renewals, dunning retries), so nothing that needs
	// the buyer (3-D Secure) can happen; such a charge fails with authentication_required.
	OffSession bool
	// IdempotencyKey makes a retried Charge return the same ProcessorRef.
	IdempotencyKey string
}

// ChargeOutcome is where a charge stands after a processor call.
type ChargeOutcome string

const (
	OutcomeSucceeded      ChargeOutcome = "succeeded"
	OutcomeFailed         ChargeOutcome = "failed"
	OutcomeRequiresAction ChargeOutcome = "requires_action" // 3-D Secure: call CompleteAction
	OutcomeProcessing     ChargeOutcome = "processing"      // delayed (SEPA): call Settle at SettlesAt
)

// Decline codes a processor reports in ChargeResult.DeclineCode. The checkout answers a card
// failure with 402 card_error / card_declined and this decline_code (D6).
const (
	DeclineGenericDecline         = "generic_decline"
	DeclineInsufficientFunds      = "insufficient_funds"
	DeclineLostCard               = "lost_card"
	DeclineExpiredCard            = "expired_card"
	DeclineIncorrectCVC           = "incorrect_cvc"
	DeclineIncorrectNumber        = "incorrect_number"
	DeclineInvalidExpiryMonth     = "invalid_expiry_month"
	DeclineInvalidExpiryYear      = "invalid_expiry_year"
	DeclineInvalidCVC             = "invalid_cvc"
	DeclineAuthenticationFailed   = "authentication_failed"   // the buyer failed or cancelled 3-D Secure
	DeclineAuthenticationRequired = "authentication_required" // 3-D Secure needed but off-session
	DeclineInvalidIBAN            = "invalid_iban"
)

// CardInfo is everything about a card that may be stored and shown (D6).
type CardInfo struct {
	Brand    string // core.Brand*
	Last4    string
	Country  string // ISO 3166-1 alpha-2 of the issuer; decides EEA vs non-EEA fees (D7)
	Funding  string // credit | debit | prepaid | unknown
	ExpMonth int
	ExpYear  int // four digits
}

// SEPAInfo is everything about a debited bank account that may be stored.
type SEPAInfo struct {
	Country string // from the IBAN
	Last4   string
}

// ChargeAction is what the buyer must do before a requires_action charge can go on.
type ChargeAction struct {
	Kind string // "three_d_secure"
	// RedirectURL is the issuer's page for a live processor. Empty in the sandbox: Kassa shows
	// its own test page whose approve/fail buttons end in CompleteAction.
	RedirectURL string
}

// ActionThreeDSecure is the only ChargeAction.Kind so far.
const ActionThreeDSecure = "three_d_secure"

// DisputeNotice says that the buyer's bank will open a dispute on a succeeded charge.
type DisputeNotice struct {
	OpensAt time.Time
	Reason  string // e.g. "fraudulent"
}

// ChargeResult is what a processor answers. It never carries a card number or an IBAN.
type ChargeResult struct {
	Outcome      ChargeOutcome
	ProcessorRef string // the processor's id of the charge; the same through its whole life

	Card *CardInfo // card charges, when the number was readable
	SEPA *SEPAInfo // SEPA charges, when the IBAN was valid

	// PaymentMethodRef is set on a succeeded charge that asked for SavePaymentMethod.
	PaymentMethodRef string

	DeclineCode    string // failed: one of the Decline* codes
	FailureMessage string // failed: a sentence fit for the buyer, never containing the number

	Action    *ChargeAction  // requires_action
	SettlesAt *time.Time     // processing: when Settle will give the final outcome
	Dispute   *DisputeNotice // succeeded, and a dispute will follow
	// FundsAvailableNow: the amount is available in the balance at once instead of at T+2 (D7).
	FundsAvailableNow bool
}

// Errors of the Processor port. A decline is not an error but a failed ChargeResult; an error
// means the call itself could not be served (a bug in the caller, or transient trouble).
var (
	ErrChargeRequestInvalid = errors.New("processor: charge request invalid")
	ErrProcessorRefUnknown  = errors.New("processor: unknown processor reference")
	ErrChargeNotActionable  = errors.New("processor: charge is not awaiting customer action")
	ErrChargeNotSettleable  = errors.New("processor: charge is not a delayed (processing) charge")
	// ErrChargeUnknown: Lookup found no charge made with that idempotency key; the processor
	// never received it, so nothing was charged.
	ErrChargeUnknown = errors.New("processor: no charge with this idempotency key")
)

// Processor moves money for payments: the sandbox adapter for the test environment, a live
// processor's adapter for live. Every call takes the scope's time (`now`, the test clock in
// the sandbox, D12) instead of reading a clock. Implementations keep no state that callers
// depend on: everything a later call needs is in ProcessorRef and PaymentMethodRef.
type Processor interface {
	// Charge runs a charge. A decline is a failed result, not an error.
	Charge(ctx context.Context, req ChargeRequest, now time.Time) (ChargeResult, error)
	// CompleteAction reports the buyer's 3-D Secure outcome on a requires_action charge:
	// approve gives succeeded, refusal failed with authentication_failed. Asked again with the
	// same answer it answers the same (the charge-attempt sweep relies on it).
	CompleteAction(ctx context.Context, processorRef string, approve bool, now time.Time) (ChargeResult, error)
	// Settle gives the outcome of a processing (SEPA) charge: still processing before its
	// SettlesAt, then succeeded or failed. It is idempotent.
	Settle(ctx context.Context, processorRef string, now time.Time) (ChargeResult, error)
	// Lookup answers what the charge made in scope with idempotencyKey came to: what Charge
	// answered for it (a 3-D Secure charge still requires_action, a SEPA debit processing with
	// its SettlesAt), so that a charge whose outcome Kassa failed to record can be recorded
	// later (the charge-attempt sweep). A key the processor never received answers
	// ErrChargeUnknown: nothing was charged.
	Lookup(ctx context.Context, scope core.Scope, idempotencyKey string, now time.Time) (ChargeResult, error)
	// Refunder gives back succeeded charges (Refund, LookupRefund).
	Refunder
}

// RefundRequest asks a processor to give back part or all of a succeeded charge.
type RefundRequest struct {
	Scope core.Scope
	// ProcessorRef is the processor's id of the charge (ChargeResult.ProcessorRef).
	ProcessorRef string
	// Amount in minor units of Currency, positive and at most what remains of the charge.
	Amount   int64
	Currency core.Currency
	// IdempotencyKey makes a retried Refund answer what the first call answered, and lets
	// LookupRefund find it: Kassa uses the refund's id (re_…), one refund per key.
	IdempotencyKey string
}

// RefundOutcome is where a refund stands after a processor call.
type RefundOutcome string

const (
	RefundSucceeded RefundOutcome = "succeeded"
	RefundFailed    RefundOutcome = "failed"
)

// RefundResult is what a processor answers about a refund.
type RefundResult struct {
	Outcome      RefundOutcome
	ProcessorRef string // the processor's id of the refund
	// FailureCode and FailureMessage say why a failed refund failed.
	FailureCode, FailureMessage string
}

// Errors of the refund calls of the Processor port.
var (
	ErrRefundRequestInvalid = errors.New("processor: refund request invalid")
	// ErrRefundUnknown: LookupRefund found no refund made with that idempotency key; the
	// processor never received it, so nothing was refunded.
	ErrRefundUnknown = errors.New("processor: no refund with this idempotency key")
)

// Refunder is the refund half of a processor. Like the charge calls, every call takes the
// scope's time and is made with no transaction open.
type Refunder interface {
	// Refund gives back req.Amount of the charge req.ProcessorRef. Called again with the same
	// IdempotencyKey it answers what the first call answered and refunds nothing more.
	Refund(ctx context.Context, req RefundRequest, now time.Time) (RefundResult, error)
	// LookupRefund answers what the refund made in scope with idempotencyKey came to; a key
	// the processor never received answers ErrRefundUnknown: nothing was refunded.
	LookupRefund(ctx context.Context, scope core.Scope, idempotencyKey string, now time.Time) (RefundResult, error)
}

// SetupCustomer is the customer a payment method is saved for. A processor that keeps
// customers of its own (Stripe: a Customer on the merchant's connected account) creates one on
// the first setup and answers its reference (SetupResult.CustomerRef); Kassa keeps it and
// gives it back (ProcessorRef) on every later setup of the same customer.
type SetupCustomer struct {
	ID           string // Kassa's cus_ id
	Name, Email  string
	ProcessorRef string // from an earlier SetupResult.CustomerRef; "" the first time
}

// SetupRequest asks a processor to verify a payment method and save it for later off-session
// charges, moving no money: a Stripe SetupIntent (usage off_session, confirmed with the
// method) on the merchant's connected account. Exactly one of Card (Method card) and SEPA
// (Method sepa_debit) is given; SEPA creates the mandate.
type SetupRequest struct {
	Scope core.Scope
	// Reference is the Kassa object the method is saved for (the subscription's first invoice
	// in_…, or the customer cus_…).
	Reference string
	Customer  SetupCustomer
	Method    PaymentMethodKind
	Card      *CardDetails
	SEPA      *SEPADetails
	// IdempotencyKey makes a retried SetupPaymentMethod answer the same, and lets LookupSetup
	// find it.
	IdempotencyKey string
}

// SetupResult is what a processor answers about a setup. It never carries a card number or an
// IBAN. Outcome is succeeded, failed or requires_action (3-D Secure, answered through
// CompleteAction with ProcessorRef like a charge's); a setup is never processing.
type SetupResult struct {
	Outcome      ChargeOutcome
	ProcessorRef string // the processor's id of the setup
	// CustomerRef is the processor's customer the method is attached to (SetupCustomer).
	CustomerRef string
	// PaymentMethodRef is the saved method of a succeeded setup: opaque, it is everything a
	// later off-session ChargeRequest.PaymentMethodRef needs (for Stripe, the customer and the
	// payment method).
	PaymentMethodRef string

	Card *CardInfo
	SEPA *SEPAInfo

	DeclineCode    string
	FailureMessage string
	Action         *ChargeAction
}

// ErrSetupUnknown: LookupSetup found no setup made with that idempotency key; the processor
// never received it, so nothing was saved.
var ErrSetupUnknown = errors.New("processor: no setup with this idempotency key")

// MethodSaver is the part of a processor that saves payment methods for off-session charges
// (subscriptions). It is a port of its own beside Processor: the sandbox implements both, and
// a live adapter implements it when it supports saved methods.
// Like the charge calls, every call takes the scope's time and is made with no transaction
// open. A saved method is charged with Charge (PaymentMethodRef, OffSession): a method that
// needs the customer then fails with authentication_required, and the customer pays on the
// hosted invoice page.
type MethodSaver interface {
	// SetupPaymentMethod verifies and saves the method of req. A refusal is a failed result
	// with a decline code, not an error.
	SetupPaymentMethod(ctx context.Context, req SetupRequest, now time.Time) (SetupResult, error)
	// LookupSetup answers what the setup made in scope with idempotencyKey came to (its
	// CustomerRef may be empty: the caller keeps the customer's); a key the processor never
	// received answers ErrSetupUnknown.
	LookupSetup(ctx context.Context, scope core.Scope, idempotencyKey string, now time.Time) (SetupResult, error)
	// DetachPaymentMethod makes a saved method unusable for later charges. Detaching one
	// already detached is not an error.
	DetachPaymentMethod(ctx context.Context, scope core.Scope, paymentMethodRef string, now time.Time) error
}
