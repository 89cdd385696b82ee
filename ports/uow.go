package ports

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// UnitOfWork runs a function in one database transaction: committed when it returns nil,
// rolled back when it returns an error or panics.
//
// The transaction is explicit. What belongs to it is what fn writes and reads through the
// repositories a typed unit of work hands it (UnitOfWorkOf: tx). A store called inside fn does
// not join the transaction: it runs on its own connection, sees only what is committed, and
// commits (or not) on its own; read what fn needs through tx, or before Do. The untyped form
// hands fn no repositories at all: it is for code that knows no module and only opens a
// transaction for units of work nested in it to join (tests; the gate uses
// UnitOfWorkOf[IdempotencyTx]).
//
// Rules of use:
//   - fn may run more than once: Do retries it from the start when the database reports a
//     serialization failure or a deadlock (SQLSTATE 40001, 40P01), a few times with a short
//     random pause. Reset anything captured outside the closure at its top.
//   - Nothing inside fn leaves the process. The ctx Do hands fn is marked
//     (WithinTransaction), and every call that leaves the process (a processor, SMTP, the
//     development mailbox, a webhook delivery, an FX refresh) checks it first and answers
//     ErrInsideTransaction. Record the intent in the transaction (a charge attempt, an outbox
//     row, a started idempotency key), commit, then call.
//   - A Do called with the ctx of another Do's fn joins that transaction: it commits nothing
//     of its own, and when its fn fails only its own writes are undone (a savepoint). This is
//     how a use case's unit of work becomes part of a keyed request's: the idempotency gate's
//     one-transaction shape calls the operation with its fn's ctx. That ctx carries the
//     transaction for this one purpose; no store reads it.
//   - Statements are bounded by a server-side statement timeout (20 s), and so is any pause
//     between two statements: a unit of work is short database work, never a wait. A long run
//     (a payout run, a backfill, an export) is cut into batches, each its own unit of work,
//     or asks for longer timeouts explicitly (postgres.UnitOfWork.WithTimeouts).
//   - Lock order is code order: lock rows in the order modules/README.md gives (the payable,
//     then its attempt, then the payment, then ledger accounts by id).
type UnitOfWork interface {
	Do(ctx context.Context, fn func(ctx context.Context) error) error
}

// UnitOfWorkOf is a unit of work that hands fn the transaction typed as T: the repositories a
// module declared it needs inside a transaction (checkout.Tx, payments.Tx, catalog.Tx), each
// reading and writing on that one transaction. The rules are UnitOfWork's, plus:
//
//   - tx is valid only until fn returns; never keep it or hand it to another goroutine.
//   - Every repository call runs its statement where it is called and answers there (a
//     missed row, the module's sentinel for a unique violation). A call that fails may leave
//     the transaction unusable (PostgreSQL aborts it on the first failed statement): return
//     its error, do not carry on.
//
// Why a typed accessor: a use case that writes several aggregates should say which, and the
// module's Tx interface is that list, checked by the compiler where the wiring binds the
// adapter's transaction type to it. ports declares only this generic shape, so it never
// imports a module; the adapter's one transaction type satisfies every module's Tx
// structurally.
//
// Example — two aggregates, their events and a mail in one unit of work (the second
// transaction of a checkout charge, modules/checkout/charge_outcome.go; docs/composition.md):
//
//	err := svc.uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
//		s, err := tx.Sessions().Lock(ctx, scope, id)
//		...
//		// the payment, the attempt, payment_intent.succeeded and the receipt:
//		if err := svc.charger.Apply(ctx, tx, a, out); err != nil {
//			return err
//		}
//		if err := tx.Sessions().Save(ctx, s); err != nil { // what s.Changes() reports
//			return err
//		}
//		return tx.Outbox().Add(ctx, completed...)
//	})
type UnitOfWorkOf[T any] interface {
	Do(ctx context.Context, fn func(ctx context.Context, tx T) error) error
}

// Outbox is where a unit of work writes its events: they are committed with the change they
// report, or not at all, and the webhook worker and GET /v1/events read them from there. Add
// keeps the order of events, across calls too.
type Outbox interface {
	Add(ctx context.Context, events ...core.Event) error
}

// MailQueue is where a unit of work queues e-mail (a kind and a subject id, core.Mail): the
// mail worker composes and sends each after the commit. A subject has at most one mail of a
// kind: queueing it again writes nothing.
type MailQueue interface {
	Enqueue(ctx context.Context, mails ...core.Mail) error
}

// ErrInsideTransaction is what a call that leaves the process (a processor's charge, lookup or
// settlement, an e-mail, a webhook delivery, an FX refresh) answers when it is made inside a
// unit of work: such a call cannot be rolled back with the transaction, may run again when Do
// retries fn, and would hold the transaction's connection and locks for as long as the other
// side takes. Record the intent in the unit of work, commit, then call.
var ErrInsideTransaction = errors.New("a call that leaves the process was made inside a unit of work")

type withinTransactionKey struct{}

// WithinTransaction returns ctx marked as the context of a unit of work's function. Every
// UnitOfWork and UnitOfWorkOf implementation marks the ctx it hands fn (the idempotency gate's
// unit of work too, so a database-only keyed operation is refused every outside call).
func WithinTransaction(ctx context.Context) context.Context {
	return context.WithValue(ctx, withinTransactionKey{}, true)
}

// OutsideTransaction answers ErrInsideTransaction when ctx is the context of a unit of work's
// function (WithinTransaction), nil otherwise. Every call that leaves the process checks it
// first, before it sends anything.
func OutsideTransaction(ctx context.Context) error {
	if v, _ := ctx.Value(withinTransactionKey{}).(bool); v {
		return ErrInsideTransaction
	}
	return nil
}
