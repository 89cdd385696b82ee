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
}

// Reader reads stored payments. Unknown ids, and ids of another merchant or environment,
// answer core.NotFound("payment", …).
type Reader interface {
	// Get reads one payment of scope.
	Get(ctx context.Context, scope core.Scope, id string) (*Payment, error)
	// GetBySession reads the payment of a checkout session (at most one exists).
	GetBySession(ctx context.Context, scope core.Scope, sessionID string) (*Payment, error)
}
