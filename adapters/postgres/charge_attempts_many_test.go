package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// The attempts of many payables recorded with one statement (ChargeMany's begin) are the rows
// one Insert each would write; a second pending attempt of any of them refuses them all.
func TestChargeAttemptsInsertManyIsAllOrNone(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	cs := checkoutOn(db, fixedClocks{payNow})
	s1, s2 := createSession(t, cs, scope), createSession(t, cs, scope)
	uow := checkoutUoW(db)
	ctx := context.Background()
	started := time.Now().UTC().Truncate(time.Microsecond)
	attempt := func(s *checkout.Session, n int) *payments.ChargeAttempt {
		return payments.RehydrateChargeAttempt(payments.ChargeAttemptSnapshot{Scope: s.Scope(), PayableKind: checkout.Kind.Name,
			Reference: s.ID(), Number: n, Kind: payments.AttemptCharge, Amount: s.Amount(), Currency: s.Currency(),
			Method: ports.MethodCard, OffSession: true, Status: payments.AttemptPending, ChargedAt: payNow, StartedAt: started})
	}
	as := []*payments.ChargeAttempt{attempt(s1, 1), attempt(s2, 1)}
	if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		return tx.ChargeAttempts().InsertMany(ctx, as)
	}); err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
			got, err := tx.ChargeAttempts().Lock(ctx, scope, a.Reference(), a.IdempotencyKey())
			if err != nil {
				return err
			}
			if g, w := got.Snapshot(), a.Snapshot(); !g.ChargedAt.Equal(w.ChargedAt) || !g.StartedAt.Equal(w.StartedAt) {
				t.Errorf("%s: times %v %v, want %v %v", a.IdempotencyKey(), g.ChargedAt, g.StartedAt, w.ChargedAt, w.StartedAt)
			} else {
				g.ChargedAt, g.StartedAt, w.ChargedAt, w.StartedAt = w.ChargedAt, w.StartedAt, w.ChargedAt, w.StartedAt
				if g != w {
					t.Errorf("%s: stored %+v, want %+v", a.IdempotencyKey(), g, w)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	// s1's attempt is still pending: a batch with s1 and a third session writes nothing.
	s3 := createSession(t, cs, scope)
	err := uow.Do(ctx, func(ctx context.Context, tx checkout.Tx) error {
		return tx.ChargeAttempts().InsertMany(ctx, []*payments.ChargeAttempt{attempt(s3, 1), attempt(s1, 2)})
	})
	if !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("InsertMany with a payable in flight: %v, want ErrChargeInProgress", err)
	}
	if c := countRows(t, db, `SELECT count(*) FROM charge_attempts WHERE reference = $1`, s3.ID()); c != 0 {
		t.Fatalf("%d attempts of the third session, want none", c)
	}
}
