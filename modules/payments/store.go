package payments

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Record is a payment as storage keeps it: the aggregate plus the processor facts that the
// aggregate does not model yet but that later work needs (the settlement sweep reads
// ProcessorRef and SettlesAt; the dashboard shows the card expiry and the SEPA account).
type Record struct {
	Payment *Payment
	// ProcessorRef is the processor's id of the charge (ports.ChargeResult.ProcessorRef).
	ProcessorRef string
	// PayableKey is what storage keeps unique among the payments of one payable kind: the
	// payable's id (OnePaymentPerPayable) or the attempt's idempotency key
	// (OnePaymentPerAttempt). A second payment with the same key is ErrPaymentExists.
	PayableKey string
	// SettlesAt is when a processing (delayed) payment gets its final outcome; nil otherwise.
	SettlesAt *time.Time
	// CardExpMonth and CardExpYear are the card's expiry (0 when unknown or not a card).
	CardExpMonth, CardExpYear int
	// SEPACountry and SEPALast4 describe the debited account of a sepa_debit payment.
	SEPACountry, SEPALast4 string
	// DisputeOpensAt is when the buyer's bank opens a dispute on this payment (the sandbox's
	// dispute card), with its reason; nil when none is announced.
	DisputeOpensAt *time.Time
	DisputeReason  string
	// DisputeID is the dispute opened on the payment (dp_…), "" when none was; once set it
	// stays, so a won dispute never reopens.
	DisputeID string
	// AvailableAt is when the payment's funds become available in the balance (D7, D16): two
	// days after a card charge (at once when the processor says so, the sandbox's
	// 4000000000000077), two days after a delayed payment settles; nil while it is processing
	// or when it failed.
	AvailableAt *time.Time
}

// FundsDelay is how long after the charge (or the settlement of a delayed method) funds
// become available (D7: T+2 days).
const FundsDelay = 48 * time.Hour

// Reader reads stored payments. Unknown ids, and ids of another merchant or environment,
// answer ErrNotFound.
type Reader interface {
	// Get reads one payment of scope.
	Get(ctx context.Context, scope core.Scope, id string) (*Payment, error)
	// GetBySession reads the payment of a checkout session (at most one exists).
	GetBySession(ctx context.Context, scope core.Scope, sessionID string) (*Payment, error)
}

// DueStore finds the payments that have due work (Record.DueAt): the settlement of a
// processing payment, or the announced dispute of a succeeded or partially refunded payment
// that has none yet. It reads only: the sweep reads due payments, makes every outside call
// (the processor, reading the session) while no transaction is open, and then applies its
// decisions in one short unit of work over Tx (PaymentRepository.LockDue and SaveDue, the
// outbox, the mail queue).
type DueStore interface {
	// ListDue reads, without locking, up to limit payments with DueAt ≤ until, earliest
	// first. With scope nil it covers live payments and test payments of merchants whose
	// test clock is not frozen; with a scope only that scope.
	ListDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*Record, error)
	// NextDue returns the earliest due time ≤ until among the scope's payments; ok is false
	// when none is due by until.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (at time.Time, ok bool, err error)
}
