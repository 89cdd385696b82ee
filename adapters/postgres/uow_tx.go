package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// The typed unit of work (ports.UnitOfWorkOf).
//
// Each module declares, in its own package, the repositories it needs inside a transaction:
// its Tx interface (payments.Tx: payments, charge attempts, the outbox, the mail queue;
// checkout.Tx: payments.Tx and the sessions). Tx below is the one transaction type that
// satisfies them all, structurally: a module never imports this package, and ports never
// imports a module. The wiring binds it to a module's interface with Bind, where the compiler
// checks that it fits:
//
//	co, err := checkout.NewService(sessions, postgres.Bind(uow, func(tx *postgres.Tx) checkout.Tx { return tx }), …)
//
// A repository is per aggregate and decides nothing: it locks, reads, inserts, and writes what
// the entity reports changed. Rules (a session completes, an attempt is applied once) stay in
// the modules; the only thing a repository refuses is what a constraint refuses (a second
// pending attempt, a second payment of a session), with the module's sentinel.
//
// Tx is the ambient transaction of the unit of work (see "The ambient transaction" in tx.go):
// the ctx the unit of work hands fn carries the same transaction, so stores called with ctx
// (the idempotency record of a keyed request among them) write in it too.
//
// The repositories' writes (Sessions().Save, Payments().Insert, ChargeAttempts().Insert and
// Save, Outbox().Add, Mail().Enqueue) are buffered and sent together, as one statement, before
// the next read or other statement on the transaction and before COMMIT ("Write-behind" in
// writebehind.go): a confirmation's second transaction sends its six writes in one round trip.
// Their errors (a sentinel, a missed row) come from that statement. The due sweep's SaveDue
// and every read are sent at once, after the buffer.

// Tx is the transaction of one unit of work, seen as the repositories of every module. It is
// valid only inside the Do that handed it out.
type Tx struct{ q txq }

var (
	_ payments.Tx = (*Tx)(nil)
	_ checkout.Tx = (*Tx)(nil)
)

// Sessions is checkout's session repository on this transaction.
func (t *Tx) Sessions() checkout.SessionRepository { return sessionRepo(*t) }

// Payments is payments' payment repository on this transaction.
func (t *Tx) Payments() payments.PaymentRepository { return paymentRepo(*t) }

// ChargeAttempts is payments' charge attempt repository on this transaction.
func (t *Tx) ChargeAttempts() payments.AttemptRepository { return attemptRepo(*t) }

// Outbox is the event outbox (the events table) on this transaction.
func (t *Tx) Outbox() ports.Outbox { return outbox(*t) }

// Mail is the mail queue (mail_outbox) on this transaction.
func (t *Tx) Mail() ports.MailQueue { return mailQueue(*t) }

// Bind returns the unit of work u handing each fn the transaction as T, the Tx interface of a
// module; as is the conversion, normally the identity written with the module's type so that
// the compiler checks *Tx satisfies it (a test may wrap the Tx to inject failures). Do has
// UnitOfWork.Do's rules: retries of fn on 40001/40P01, a nested Do joins the outer one within
// a savepoint.
func Bind[T any](u *UnitOfWork, as func(*Tx) T) ports.UnitOfWorkOf[T] {
	return boundUnitOfWork[T]{u: u, as: as}
}

type boundUnitOfWork[T any] struct {
	u  *UnitOfWork
	as func(*Tx) T
}

func (b boundUnitOfWork[T]) Do(ctx context.Context, fn func(ctx context.Context, tx T) error) error {
	return b.u.Do(ctx, func(ctx context.Context) error {
		a := ambientOf(ctx)
		if a == nil {
			return errors.New("postgres: unit of work without a transaction")
		}
		return fn(ctx, b.as(&Tx{q: txq{a: a}}))
	})
}

// txq runs statements on the unit of work's transaction, after the writes buffered before them
// (ambient.conn), and notes a serialization failure or a deadlock for Do's retry, even when the
// caller turns the error into another (ambient.note). The repositories' reads flush explicitly
// first (read), so that they answer a failed flush's error themselves: sqlx.GetContext goes
// through QueryRowxContext, whose *sqlx.Row cannot carry it.
type txq struct{ a *ambient }

var _ interface {
	sqlx.ExecerContext
	sqlx.QueryerContext
} = txq{}

// read sends the buffered writes before a repository's read.
func (q txq) read(ctx context.Context) error { return q.a.flush(ctx) }

func (q txq) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tx, err := q.a.conn(ctx)
	if err != nil {
		return nil, err
	}
	res, err := tx.ExecContext(ctx, query, args...)
	return res, q.a.note(err)
}

func (q txq) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	tx, err := q.a.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	return rows, q.a.note(err)
}

func (q txq) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	tx, err := q.a.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryxContext(ctx, query, args...)
	return rows, q.a.note(err)
}

// QueryRowxContext flushes too; a failure of that flush is kept in ambient.failed (the query
// then meets the failed transaction) and reported by Do.
func (q txq) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	if q.a.opt != nil { // optimistic: no transaction; the repositories read on the pool themselves
		_ = q.a.misuse("a statement outside the typed repositories")
		return q.a.opt.db.QueryRowxContext(ctx, query, args...)
	}
	_ = q.a.flush(ctx)
	return q.a.tx.QueryRowxContext(ctx, query, args...)
}

// sessionRepo is checkout.SessionRepository on a transaction.
type sessionRepo Tx

// Lock reads the session FOR UPDATE (with its payment when it is complete); an unknown one is
// checkout.ErrNotFound. In an optimistic unit it reads it unlocked, with its version
// (optimistic.go).
func (r sessionRepo) Lock(ctx context.Context, scope core.Scope, id string) (*checkout.Session, error) {
	if r.q.a.opt != nil {
		return r.q.a.readSession(ctx, scope, id)
	}
	if err := r.q.read(ctx); err != nil {
		return nil, err
	}
	s, err := getSession(ctx, r.q, scope, id, true)
	return s, r.q.a.note(err)
}

// ClaimDue locks up to limit due sessions, skipping locked ones (claimDueSessions).
func (r sessionRepo) ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*checkout.Session, error) {
	if r.q.a.opt != nil {
		return nil, r.q.a.misuse("ClaimDue locks")
	}
	if err := r.q.read(ctx); err != nil {
		return nil, err
	}
	return claimDueSessions(ctx, r.q, scope, until, limit)
}

// Save buffers the write of what the session reports changed (sessionUpdate).
func (r sessionRepo) Save(ctx context.Context, s *checkout.Session) error {
	w, changed := sessionUpdate(s)
	if !changed {
		return nil
	}
	return r.q.a.add(ctx, w)
}

// paymentRepo is payments.PaymentRepository on a transaction.
type paymentRepo Tx

// Insert buffers a new payment; a second one of a session answers payments.ErrPaymentExists
// (from the flush).
func (r paymentRepo) Insert(ctx context.Context, rec *payments.Record) error {
	w, err := paymentInsert(rec)
	if err != nil {
		return err
	}
	return r.q.a.add(ctx, w)
}

// LockDue locks the due sweep's payments, skipping locked ones (lockDuePayments).
func (r paymentRepo) LockDue(ctx context.Context, recs []*payments.Record) ([]*payments.Record, error) {
	if r.q.a.opt != nil {
		return nil, r.q.a.misuse("LockDue locks")
	}
	if err := r.q.read(ctx); err != nil {
		return nil, err
	}
	out, err := lockDuePayments(ctx, r.q, recs)
	return out, r.q.a.note(err)
}

// SaveDue writes the due sweep's change of a locked payment and its dispute (saveDuePayment),
// at once.
func (r paymentRepo) SaveDue(ctx context.Context, rec *payments.Record, opened *payments.Dispute) error {
	return saveDuePayment(ctx, r.q, rec, opened)
}

// attemptRepo is payments.AttemptRepository on a transaction.
type attemptRepo Tx

// Insert buffers a new pending attempt (payments.ErrChargeInProgress for a second one, from
// the flush).
func (r attemptRepo) Insert(ctx context.Context, a *payments.ChargeAttempt) error {
	w, err := chargeAttemptInsert(a)
	if err != nil {
		return err
	}
	return r.q.a.add(ctx, w)
}

// Lock reads an attempt FOR UPDATE; in an optimistic unit, unlocked with its version
// (optimistic.go).
func (r attemptRepo) Lock(ctx context.Context, scope core.Scope, reference, key string) (*payments.ChargeAttempt, error) {
	if r.q.a.opt != nil {
		return r.q.a.readChargeAttempt(ctx, scope, reference, key)
	}
	if err := r.q.read(ctx); err != nil {
		return nil, err
	}
	a, err := lockChargeAttempt(ctx, r.q, scope, reference, key)
	return a, r.q.a.note(err)
}

// Save buffers the resolution of a pending attempt.
func (r attemptRepo) Save(ctx context.Context, a *payments.ChargeAttempt) error {
	w, err := chargeAttemptUpdate(a)
	if err != nil {
		return err
	}
	return r.q.a.add(ctx, w)
}

// outbox is ports.Outbox on a transaction: the events of every Add of one flush are one
// INSERT into events, in order.
type outbox Tx

func (o outbox) Add(ctx context.Context, events ...core.Event) error {
	if len(events) == 0 {
		return nil
	}
	rows, err := eventRows(events)
	if err != nil {
		return err
	}
	return o.q.a.addEvents(ctx, rows)
}

// mailQueue is ports.MailQueue on a transaction: the mails of every Enqueue of one flush are
// one INSERT into mail_outbox.
type mailQueue Tx

func (m mailQueue) Enqueue(ctx context.Context, mails ...core.Mail) error {
	if len(mails) == 0 {
		return nil
	}
	return m.q.a.addMails(ctx, mails)
}
