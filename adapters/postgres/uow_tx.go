package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/invoicing"
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
// Tx is the transaction of the unit of work, handed to fn explicitly (see "Transactions are
// explicit" in tx.go): only its repositories run on it; a store called with fn's ctx runs on
// the pool.
//
// Every repository call runs its statement at once, where it is called: Lock is SELECT … FOR
// UPDATE, Save runs its UPDATE and fails on the spot when it did not change exactly one row,
// and Insert answers the module's sentinel for a unique violation on the spot
// (payments.ErrPaymentExists, payments.ErrChargeInProgress). Outbox().Add and Mail().Enqueue
// run their INSERT at once too.

// Tx is the transaction of one unit of work, seen as the repositories of every module. It is
// valid only inside the Do that handed it out.
type Tx struct{ q txq }

var (
	_ payments.Tx         = (*Tx)(nil)
	_ checkout.Tx         = (*Tx)(nil)
	_ catalog.Tx          = (*Tx)(nil)
	_ invoicing.Tx        = (*Tx)(nil)
	_ ports.IdempotencyTx = (*Tx)(nil)
)

// Catalog is the catalog store bound to this transaction: its writes (CreateProduct,
// UpdateProduct's closure) run in a savepoint of it and commit with the unit of work.
func (t *Tx) Catalog() catalog.Writer { return &CatalogStore{db: bound(t.q.a)} }

// Sessions is checkout's session repository on this transaction.
func (t *Tx) Sessions() checkout.SessionRepository { return sessionRepo(*t) }

// Payments is payments' payment repository on this transaction.
func (t *Tx) Payments() payments.PaymentRepository { return paymentRepo(*t) }

// Disputes is payments' dispute repository on this transaction.
func (t *Tx) Disputes() payments.DisputeRepository { return disputeRepo(*t) }

// Volumes is payments' daily volume totals on this transaction.
func (t *Tx) Volumes() payments.VolumeRepository { return volumeRepo(*t) }

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

// txq runs statements on the unit of work's transaction and notes a serialization failure or
// a deadlock for Do's retry, even when the caller turns the error into another (ambient.note).
type txq struct{ a *ambient }

var _ interface {
	sqlx.ExecerContext
	sqlx.QueryerContext
} = txq{}

func (q txq) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := q.a.tx.ExecContext(ctx, query, args...)
	return res, q.a.note(err)
}

func (q txq) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := q.a.tx.QueryContext(ctx, query, args...)
	return rows, q.a.note(err)
}

func (q txq) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	rows, err := q.a.tx.QueryxContext(ctx, query, args...)
	return rows, q.a.note(err)
}

// QueryRowxContext runs a one-row query; a *sqlx.Row carries its error to Scan.
func (q txq) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	return q.a.tx.QueryRowxContext(ctx, query, args...)
}

// write is one statement a repository sends: an INSERT or an UPDATE, named for its errors.
type write struct {
	what string // names it in errors: "checkout_sessions: update cs_…"
	sql  string
	args []any
	one  bool // it must write exactly one row
}

// exec runs w at once. A write that must change one row and changed none is an error
// (errRowMissed), answered here, by the call that caused it.
func (q txq) exec(ctx context.Context, w write) error {
	res, err := q.ExecContext(ctx, w.sql, w.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", w.what, err)
	}
	if !w.one {
		return nil
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", w.what, err)
	}
	if n != 1 {
		return fmt.Errorf("%s: %w (%d rows)", w.what, errRowMissed, n)
	}
	return nil
}

// errRowMissed is a repository's Save that found no row to write (or more than one).
var errRowMissed = errors.New("the write did not change exactly one row")

// uniqueAs is err, or sentinel wrapping err when err is a unique violation of constraint:
// a repository's Insert answers the module's sentinel for what a constraint refuses.
func uniqueAs(err error, constraint string, sentinel error) error {
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23505" && pe.Constraint == constraint {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}

// sessionRepo is checkout.SessionRepository on a transaction.
type sessionRepo Tx

// Lock reads the session FOR UPDATE (with its payment when it is complete); an unknown one is
// checkout.ErrNotFound.
func (r sessionRepo) Lock(ctx context.Context, scope core.Scope, id string) (*checkout.Session, error) {
	s, err := getSession(ctx, r.q, scope, id, true)
	return s, r.q.a.note(err)
}

// ClaimDue locks up to limit due sessions, skipping locked ones (claimDueSessions).
func (r sessionRepo) ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*checkout.Session, error) {
	return claimDueSessions(ctx, r.q, scope, until, limit)
}

// Insert writes a new session.
func (r sessionRepo) Insert(ctx context.Context, s *checkout.Session) error {
	return insertSession(ctx, r.q, s)
}

// Save writes what the session reports changed (sessionUpdate); no row is an error.
func (r sessionRepo) Save(ctx context.Context, s *checkout.Session) error {
	w, changed := sessionUpdate(s)
	if !changed {
		return nil
	}
	return r.q.exec(ctx, w)
}

// paymentRepo is payments.PaymentRepository on a transaction.
type paymentRepo Tx

// Insert writes a new payment; a second one with the same payable kind and key is
// payments.ErrPaymentExists.
func (r paymentRepo) Insert(ctx context.Context, rec *payments.Record) error {
	w, err := paymentInsert(rec)
	if err != nil {
		return err
	}
	return uniqueAs(r.q.exec(ctx, w), "payments_payable", payments.ErrPaymentExists)
}

// InsertMany saves new payments with one statement (paymentsInsert); a second payment of a
// payable key among them (stored before, or twice in recs) is payments.ErrPaymentExists, and
// none is written.
func (r paymentRepo) InsertMany(ctx context.Context, recs []*payments.Record) error {
	if len(recs) == 0 {
		return nil
	}
	w, err := paymentsInsert(recs)
	if err != nil {
		return err
	}
	return uniqueAs(r.q.exec(ctx, w), "payments_payable", payments.ErrPaymentExists)
}

// LockDue locks the due sweep's payments, skipping locked ones (lockDuePayments).
func (r paymentRepo) LockDue(ctx context.Context, recs []*payments.Record) ([]*payments.Record, error) {
	out, err := lockDuePayments(ctx, r.q, recs)
	return out, r.q.a.note(err)
}

// Lock reads a payment FOR UPDATE; an unknown one is payments.ErrNotFound.
func (r paymentRepo) Lock(ctx context.Context, scope core.Scope, id string) (*payments.Record, error) {
	rec, err := lockPayment(ctx, r.q, scope, id)
	return rec, r.q.a.note(err)
}

// Save writes what the payment reports changed (paymentUpdate); no row is an error.
func (r paymentRepo) Save(ctx context.Context, rec *payments.Record) error {
	w, changed := paymentUpdate(rec)
	if !changed {
		return nil
	}
	return r.q.exec(ctx, w)
}

// disputeRepo is payments.DisputeRepository on a transaction.
type disputeRepo Tx

// Insert writes a new dispute.
func (r disputeRepo) Insert(ctx context.Context, d *payments.Dispute) error {
	return r.q.exec(ctx, disputeInsert(d))
}

// Lock reads a dispute FOR UPDATE; an unknown one is payments.ErrNoDispute.
func (r disputeRepo) Lock(ctx context.Context, scope core.Scope, id string) (*payments.Dispute, error) {
	d, err := lockDispute(ctx, r.q, scope, id)
	return d, r.q.a.note(err)
}

// LockDue locks the dispute sweep's disputes, skipping locked ones (lockDueDisputes).
func (r disputeRepo) LockDue(ctx context.Context, ds []*payments.Dispute) ([]*payments.Dispute, error) {
	out, err := lockDueDisputes(ctx, r.q, ds)
	return out, r.q.a.note(err)
}

// Save writes what changed on a dispute (disputeUpdate); no row is an error.
func (r disputeRepo) Save(ctx context.Context, d *payments.Dispute) error {
	if !d.Changed() {
		return nil
	}
	return r.q.exec(ctx, disputeUpdate(d))
}

// attemptRepo is payments.AttemptRepository on a transaction.
type attemptRepo Tx

// Insert writes a new pending attempt; a second pending one of the payable is
// payments.ErrChargeInProgress.
func (r attemptRepo) Insert(ctx context.Context, a *payments.ChargeAttempt) error {
	w, err := chargeAttemptInsert(a)
	if err != nil {
		return err
	}
	return uniqueAs(r.q.exec(ctx, w), "charge_attempts_one_pending", payments.ErrChargeInProgress)
}

// InsertMany writes new pending attempts with one statement (chargeAttemptsInsert); a second
// pending one of any payable is payments.ErrChargeInProgress, and none is written.
func (r attemptRepo) InsertMany(ctx context.Context, as []*payments.ChargeAttempt) error {
	if len(as) == 0 {
		return nil
	}
	w, err := chargeAttemptsInsert(as)
	if err != nil {
		return err
	}
	return uniqueAs(r.q.exec(ctx, w), "charge_attempts_one_pending", payments.ErrChargeInProgress)
}

// Lock reads an attempt FOR UPDATE.
func (r attemptRepo) Lock(ctx context.Context, scope core.Scope, reference, key string) (*payments.ChargeAttempt, error) {
	a, err := lockChargeAttempt(ctx, r.q, scope, reference, key)
	return a, r.q.a.note(err)
}

// LockMany reads attempts FOR UPDATE with one statement (lockChargeAttempts).
func (r attemptRepo) LockMany(ctx context.Context, as []*payments.ChargeAttempt) ([]*payments.ChargeAttempt, error) {
	out, err := lockChargeAttempts(ctx, r.q, as)
	return out, r.q.a.note(err)
}

// SaveMany writes the resolutions of pending attempts with one statement
// (chargeAttemptsUpdate); if one is not pending, none is written.
func (r attemptRepo) SaveMany(ctx context.Context, as []*payments.ChargeAttempt) error {
	if len(as) == 0 {
		return nil
	}
	w, err := chargeAttemptsUpdate(as)
	if err != nil {
		return err
	}
	res, err := r.q.ExecContext(ctx, w.sql, w.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", w.what, r.q.a.note(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", w.what, err)
	}
	if n != int64(len(as)) {
		return fmt.Errorf("%s: %w (%d of %d rows)", w.what, errRowMissed, n, len(as))
	}
	return nil
}

// Save writes the resolution of a pending attempt; an attempt no longer pending is an error.
func (r attemptRepo) Save(ctx context.Context, a *payments.ChargeAttempt) error {
	w, err := chargeAttemptUpdate(a)
	if err != nil {
		return err
	}
	return r.q.exec(ctx, w)
}

// outbox is ports.Outbox on a transaction: the events of one Add are one INSERT into events,
// in order.
type outbox Tx

func (o outbox) Add(ctx context.Context, events ...core.Event) error {
	return insertEvents(ctx, o.q, events)
}

// mailQueue is ports.MailQueue on a transaction: the mails of one Enqueue are one INSERT into
// mail_outbox.
type mailQueue Tx

func (m mailQueue) Enqueue(ctx context.Context, mails ...core.Mail) error {
	if len(mails) == 0 {
		return nil
	}
	q, args := mailInsert(mails, 1)
	if _, err := m.q.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("mail_outbox: queue %s: %w", mails[0].Kind, err)
	}
	return nil
}

// RecoveryPoints moves the recovery point of a started idempotency key on this transaction,
// so that it commits with the phase's change (ports.RecoveryPoints).
func (t *Tx) RecoveryPoints() ports.RecoveryPoints { return recoveryPoints(*t) }

type recoveryPoints Tx

func (r recoveryPoints) Reach(ctx context.Context, k ports.IdempotencyKey, point string) error {
	return reachPoint(ctx, r.q, k, point)
}
