package ports

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// UnitOfWork runs a function in one database transaction: everything it writes through the
// stores is committed together when it returns nil, and nothing is when it returns an error
// or panics.
//
// The transaction travels in the context that Do hands to fn. A module therefore needs no
// special transactional repository: the store ports it already has are its repositories
// inside the unit of work, as long as it calls them with that context. The Postgres adapter
// runs every statement of such a call on the transaction (and never on a second pooled
// connection); the transaction itself stays invisible outside the adapter.
//
// Rules of use:
//   - fn may run more than once: Do retries it from the start when the database reports a
//     serialization failure or a deadlock (SQLSTATE 40001, 40P01), a few times with a short
//     random pause. fn must therefore not have effects outside the database (no processor
//     call, no e-mail, no HTTP) — record them in the transaction (an outbox row, a charge
//     attempt) and perform them after Do returned.
//   - A Do inside another Do (same context) joins the outer transaction: it commits nothing
//     of its own, and when its fn fails only its own writes are undone (a savepoint).
//   - Statements are bounded by a server-side statement timeout, and so is any pause between
//     two statements: a unit of work is short database work, never a wait.
//
// UnitOfWork is the untyped form: what runs inside sees the transaction only through the
// stores it calls with ctx. It is what cross-cutting code uses that knows no module (the
// idempotency gate wraps every keyed POST in one, whatever the handler does inside). A use
// case that composes several aggregates uses UnitOfWorkOf, which also hands it the
// transaction as the repositories its module declared; both are the same transaction.
type UnitOfWork interface {
	Do(ctx context.Context, fn func(ctx context.Context) error) error
}

// UnitOfWorkOf is a unit of work that hands fn the transaction typed as T: the repositories a
// module declared it needs inside a transaction (checkout.Tx, payments.Tx), each reading and
// writing on that one transaction. The rules are UnitOfWork's (fn may run more than once; a Do
// inside another joins it within a savepoint; no effect outside the database), plus:
//
//   - tx is valid only until fn returns; never keep it or hand it to another goroutine.
//   - A repository call that fails may leave the transaction unusable (PostgreSQL aborts it
//     on the first failed statement): return its error, do not carry on.
//   - ctx is the same context UnitOfWork.Do would hand fn, so stores called with it (and an
//     enclosing idempotency record) are part of the same transaction.
//
// Why a typed accessor beside the ctx-carried transaction: a use case that writes several
// aggregates should say which, and the module's Tx interface is that list, checked by the
// compiler where the wiring binds the adapter's transaction type to it. ports declares only
// this generic shape, so it never imports a module; the adapter's one transaction type
// satisfies every module's Tx structurally.
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
