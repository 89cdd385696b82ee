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
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// ChargeAttemptStore finds charge attempts left pending (payments.AttemptStore) in
// charge_attempts (migration 00014). Attempts are written inside units of work, through the
// repository of the bound transaction (Tx.ChargeAttempts, over the helpers below). Stale runs
// on the pool.
type ChargeAttemptStore struct {
	db handle
}

// NewChargeAttemptStore returns the attempt store on db.
func NewChargeAttemptStore(db *sqlx.DB) *ChargeAttemptStore { return &ChargeAttemptStore{db: wrap(db)} }

var _ payments.AttemptStore = (*ChargeAttemptStore)(nil)

const chargeAttemptColumns = `merchant_id, environment, idempotency_key, payable_kind, reference, number, kind, amount,
	currency, method, processor_ref, approve, status, outcome, off_session, charged_at, started_at, resolved_at`

type chargeAttemptRow struct {
	MerchantID     string     `db:"merchant_id"`
	Environment    string     `db:"environment"`
	IdempotencyKey string     `db:"idempotency_key"`
	PayableKind    string     `db:"payable_kind"`
	Reference      string     `db:"reference"`
	Number         int        `db:"number"`
	Kind           string     `db:"kind"`
	Amount         int64      `db:"amount"`
	Currency       string     `db:"currency"`
	Method         string     `db:"method"`
	ProcessorRef   *string    `db:"processor_ref"`
	Approve        bool       `db:"approve"`
	Status         string     `db:"status"`
	Outcome        *string    `db:"outcome"`
	OffSession     bool       `db:"off_session"`
	ChargedAt      time.Time  `db:"charged_at"`
	StartedAt      time.Time  `db:"started_at"`
	ResolvedAt     *time.Time `db:"resolved_at"`
}

func (r *chargeAttemptRow) attempt() *payments.ChargeAttempt {
	return payments.RehydrateChargeAttempt(payments.ChargeAttemptSnapshot{
		Scope:       core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		PayableKind: payments.PayableKind(r.PayableKind), Reference: r.Reference, Number: r.Number, Kind: payments.AttemptKind(r.Kind), Amount: r.Amount,
		Currency: core.Currency(r.Currency), Method: ports.PaymentMethodKind(r.Method),
		ProcessorRef: deref(r.ProcessorRef), Approve: r.Approve, Status: payments.AttemptStatus(r.Status),
		Outcome: ports.ChargeOutcome(deref(r.Outcome)), OffSession: r.OffSession, ChargedAt: r.ChargedAt.UTC(),
		StartedAt: r.StartedAt.UTC(), ResolvedAt: derefTime(r.ResolvedAt),
	})
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// Pending reads the pending attempt of the payable reference of kind, or nil when none is
// (charge_attempts_one_pending keeps at most one).
func (st *ChargeAttemptStore) Pending(ctx context.Context, scope core.Scope, kind payments.PayableKind, reference string) (*payments.ChargeAttempt, error) {
	var r chargeAttemptRow
	err := st.db.GetContext(ctx, &r, `SELECT `+chargeAttemptColumns+` FROM charge_attempts
		WHERE merchant_id = $1 AND environment = $2 AND payable_kind = $3 AND reference = $4 AND status = 'pending'`,
		scope.MerchantID, string(scope.Env), string(kind), reference)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("charge_attempts: pending: %w", err)
	}
	return r.attempt(), nil
}

// Stale returns pending attempts recorded (started_at, the wall clock) before startedBefore,
// oldest first. With scope nil: live attempts and test attempts of merchants whose test clock
// is not frozen, like every background sweep; with a scope only that scope's.
func (st *ChargeAttemptStore) Stale(ctx context.Context, scope *core.Scope, startedBefore time.Time, limit int) ([]*payments.ChargeAttempt, error) {
	inScope, args := sweepScope("a", scope, []any{startedBefore, limit})
	where := `a.status = 'pending' AND a.started_at < $1 AND ` + inScope
	var rows []chargeAttemptRow
	if err := st.db.SelectContext(ctx, &rows, `SELECT `+chargeAttemptColumns+` FROM charge_attempts a
		WHERE `+where+` ORDER BY a.started_at LIMIT $2`, args...); err != nil {
		return nil, fmt.Errorf("charge_attempts: stale: %w", err)
	}
	out := make([]*payments.ChargeAttempt, len(rows))
	for i := range rows {
		out[i] = rows[i].attempt()
	}
	return out, nil
}

// chargeAttemptInsert records a new pending attempt. A second pending attempt of the same
// payable is refused by charge_attempts_one_pending, which the repository's Insert answers as
// payments.ErrChargeInProgress.
func chargeAttemptInsert(a *payments.ChargeAttempt) (write, error) {
	s := a.Snapshot()
	if s.Status != payments.AttemptPending {
		return write{}, errors.New("charge_attempts: insert: a new attempt is pending")
	}
	if s.PayableKind == "" || s.StartedAt.IsZero() {
		return write{}, errors.New("charge_attempts: insert: the payable kind and the start time are required")
	}
	return write{
		what: "charge_attempts: insert " + a.IdempotencyKey(),
		sql: `INSERT INTO charge_attempts (merchant_id, environment, idempotency_key, payable_kind,
		reference, number, kind, amount, currency, method, processor_ref, approve, status, off_session, charged_at, started_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending', $13, $14, $15)`,
		args: []any{s.Scope.MerchantID, string(s.Scope.Env), a.IdempotencyKey(), string(s.PayableKind), s.Reference, s.Number, string(s.Kind),
			s.Amount, string(s.Currency), string(s.Method), nullIfEmpty(s.ProcessorRef), s.Approve, s.OffSession, s.ChargedAt, s.StartedAt},
	}, nil
}

// chargeAttemptsInsert records new pending attempts with one INSERT over unnest: the rows of
// chargeAttemptInsert, one per element of the arrays, in the order of as.
func chargeAttemptsInsert(as []*payments.ChargeAttempt) (write, error) {
	n := len(as)
	merchants, envs, keys, kinds, refs := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	numbers, amounts := make([]int64, n), make([]int64, n)
	attemptKinds, currencies, methods, procRefs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	approves, offSessions := make([]bool, n), make([]bool, n)
	chargedAt, startedAt := make([]string, n), make([]string, n)
	for i, a := range as {
		if _, err := chargeAttemptInsert(a); err != nil { // the same checks as one insert
			return write{}, err
		}
		s := a.Snapshot()
		merchants[i], envs[i], keys[i], kinds[i], refs[i] = s.Scope.MerchantID, string(s.Scope.Env), a.IdempotencyKey(), string(s.PayableKind), s.Reference
		numbers[i], amounts[i] = int64(s.Number), s.Amount
		attemptKinds[i], currencies[i], methods[i], procRefs[i] = string(s.Kind), string(s.Currency), string(s.Method), s.ProcessorRef
		approves[i], offSessions[i] = s.Approve, s.OffSession
		chargedAt[i], startedAt[i] = s.ChargedAt.UTC().Format(time.RFC3339Nano), s.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	return write{
		what: fmt.Sprintf("charge_attempts: insert %d attempts", n),
		sql: `INSERT INTO charge_attempts (merchant_id, environment, idempotency_key, payable_kind,
		reference, number, kind, amount, currency, method, processor_ref, approve, status, off_session, charged_at, started_at)
		SELECT m, e, k, pk, r, nb, kd, am, cu, me, nullif(pr, ''), ap, 'pending', os, ca, sa
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::bigint[],
			$9::text[], $10::text[], $11::text[], $12::boolean[], $13::boolean[], $14::timestamptz[], $15::timestamptz[])
			AS v (m, e, k, pk, r, nb, kd, am, cu, me, pr, ap, os, ca, sa)`,
		args: []any{pq.Array(merchants), pq.Array(envs), pq.Array(keys), pq.Array(kinds), pq.Array(refs), pq.Array(numbers),
			pq.Array(attemptKinds), pq.Array(amounts), pq.Array(currencies), pq.Array(methods), pq.Array(procRefs),
			pq.Array(approves), pq.Array(offSessions), pq.Array(chargedAt), pq.Array(startedAt)},
	}, nil
}

// chargeAttemptsUpdate writes the resolutions of attempts (applied or abandoned) with one
// UPDATE over unnest: the rows of chargeAttemptUpdate; only pending rows change, and the
// repository's SaveMany fails when fewer than all did.
func chargeAttemptsUpdate(as []*payments.ChargeAttempt) (write, error) {
	n := len(as)
	mers, envs, keys, statuses, outcomes, resolved := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	seen := make(map[string]bool, n)
	for i, a := range as {
		if _, err := chargeAttemptUpdate(a); err != nil { // the same checks as one update
			return write{}, err
		}
		s := a.Snapshot()
		k := string(s.Scope.Env) + " " + s.Scope.MerchantID + " " + a.IdempotencyKey()
		if seen[k] {
			return write{}, fmt.Errorf("charge_attempts: update: %s twice", a.IdempotencyKey())
		}
		seen[k] = true
		mers[i], envs[i], keys[i] = s.Scope.MerchantID, string(s.Scope.Env), a.IdempotencyKey()
		statuses[i], outcomes[i], resolved[i] = string(s.Status), string(s.Outcome), s.ResolvedAt.UTC().Format(time.RFC3339Nano)
	}
	return write{
		what: fmt.Sprintf("charge_attempts: update %d attempts (pending)", n),
		sql: `UPDATE charge_attempts a SET status = v.st, outcome = nullif(v.oc, ''), resolved_at = v.ra
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS v (m, e, k, st, oc, ra)
		WHERE a.merchant_id = v.m AND a.environment = v.e AND a.idempotency_key = v.k AND a.status = 'pending'`,
		args: []any{pq.Array(mers), pq.Array(envs), pq.Array(keys), pq.Array(statuses), pq.Array(outcomes), pq.Array(resolved)},
	}, nil
}

// lockChargeAttempt reads the attempt key of the payable reference FOR UPDATE in the caller's
// transaction.
func lockChargeAttempt(ctx context.Context, tx sqlx.QueryerContext, scope core.Scope, reference, key string) (*payments.ChargeAttempt, error) {
	var r chargeAttemptRow
	err := sqlx.GetContext(ctx, tx, &r, `SELECT `+chargeAttemptColumns+` FROM charge_attempts
		WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3 AND reference = $4 FOR UPDATE`,
		scope.MerchantID, string(scope.Env), key, reference)
	return chargeAttemptOf(&r, err, key)
}

// lockChargeAttempts reads the attempts of as FOR UPDATE in the caller's transaction with one
// statement, locked in key order and answered in the order of as; one not stored is
// payments.ErrAttemptNotFound.
func lockChargeAttempts(ctx context.Context, tx sqlx.QueryerContext, as []*payments.ChargeAttempt) ([]*payments.ChargeAttempt, error) {
	if len(as) == 0 {
		return nil, nil
	}
	mers, envs, keys, refs := make([]string, len(as)), make([]string, len(as)), make([]string, len(as)), make([]string, len(as))
	for i, a := range as {
		mers[i], envs[i], keys[i], refs[i] = a.Scope().MerchantID, string(a.Scope().Env), a.IdempotencyKey(), a.Reference()
	}
	var rows []chargeAttemptRow
	if err := sqlx.SelectContext(ctx, tx, &rows, `SELECT `+chargeAttemptColumns+` FROM charge_attempts
		WHERE (merchant_id, environment, idempotency_key, reference) IN
			(SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]))
		ORDER BY merchant_id, environment, idempotency_key FOR UPDATE`,
		pq.Array(mers), pq.Array(envs), pq.Array(keys), pq.Array(refs)); err != nil {
		return nil, fmt.Errorf("charge_attempts: lock %d: %w", len(as), err)
	}
	type key struct {
		scope core.Scope
		key   string
	}
	byKey := make(map[key]*payments.ChargeAttempt, len(rows))
	for i := range rows {
		a := rows[i].attempt()
		byKey[key{a.Scope(), a.IdempotencyKey()}] = a
	}
	out := make([]*payments.ChargeAttempt, len(as))
	for i, a := range as {
		got, ok := byKey[key{a.Scope(), a.IdempotencyKey()}]
		if !ok {
			return nil, fmt.Errorf("charge_attempts: %s: %w", a.IdempotencyKey(), payments.ErrAttemptNotFound)
		}
		out[i] = got
	}
	return out, nil
}

// chargeAttemptOf turns the result of a one-attempt query into the attempt.
func chargeAttemptOf(r *chargeAttemptRow, err error, key string) (*payments.ChargeAttempt, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("charge_attempts: %s: %w", key, payments.ErrAttemptNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("charge_attempts: lock: %w", err)
	}
	return r.attempt(), nil
}

// chargeAttemptUpdate writes a resolved attempt (applied or abandoned): only a pending row
// changes, and the repository's Save fails when none did.
func chargeAttemptUpdate(a *payments.ChargeAttempt) (write, error) {
	s := a.Snapshot()
	if s.Status == payments.AttemptPending || s.ResolvedAt.IsZero() {
		return write{}, errors.New("charge_attempts: update: the attempt is still pending")
	}
	return write{
		what: "charge_attempts: update " + a.IdempotencyKey() + " (pending)",
		sql: `UPDATE charge_attempts SET status = $4, outcome = $5, resolved_at = $6
		WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3 AND status = 'pending'`,
		args: []any{s.Scope.MerchantID, string(s.Scope.Env), a.IdempotencyKey(), string(s.Status), nullIfEmpty(string(s.Outcome)), s.ResolvedAt},
		one:  true,
	}, nil
}
