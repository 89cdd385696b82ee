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
	// Mail is queued with the payment when it is inserted, in the same transaction
	// (MailOnCreate: the receipt of a payment that succeeds as it is created). It is not kept
	// on the payment: a stored record reads it back empty.
	Mail []core.Mail
}

// Reader reads stored payments. Unknown ids, and ids of another merchant or environment,
// answer core.NotFound("payment", …).
type Reader interface {
	// Get reads one payment of scope.
	Get(ctx context.Context, scope core.Scope, id string) (*Payment, error)
	// GetBySession reads the payment of a checkout session (at most one exists).
	GetBySession(ctx context.Context, scope core.Scope, sessionID string) (*Payment, error)
}

// DueStore claims the payments that have due work: the settlement of a processing payment
// (Record.SettlesAt), or the announced dispute (Record.DisputeOpensAt) of a succeeded or
// partially refunded payment that has none yet.
//
// The mail a change queues (DueChange.Mail, Record.Mail) is written in the transaction of the
// change; storage keeps at most one mail of a kind per subject.
type DueStore interface {
	// ClaimDue locks up to limit payments whose next due time is ≤ until, earliest first,
	// skipping rows other transactions hold (FOR UPDATE SKIP LOCKED), and calls fn for each in
	// one transaction. fn changes the record in place (the payment's state, SettlesAt); what
	// changed, the dispute fn opened and its events are written in that transaction. When fn
	// fails nothing of the batch is written and its error is returned. With scope nil it
	// covers live payments and test payments of merchants whose test clock is not frozen; with
	// a scope only that scope. It returns how many payments it claimed.
	ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int, fn DueFunc) (int, error)
	// NextDue returns the earliest due time ≤ until among the scope's payments; ok is false
	// when none is due by until.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (at time.Time, ok bool, err error)
}

// DueFunc handles one claimed payment: it changes rec in place and returns what else to write.
type DueFunc func(rec *Record) (DueChange, error)

// DueChange is what handling a due payment writes besides the payment itself.
type DueChange struct {
	// Dispute is a dispute opened on the payment (nil: none).
	Dispute *Dispute
	// Events report the change, in order.
	Events []core.Event
	// Mail is queued in the same transaction (the receipt of a payment that succeeded).
	Mail []core.Mail
}
