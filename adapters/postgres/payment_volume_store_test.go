package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/sandbox"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// movingClocks is every scope's clock, set by the test.
type movingClocks struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movingClocks) Now(context.Context, core.Scope) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t, nil
}

func (c *movingClocks) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// volumeDaysRecomputedSQL is the daily totals as a sum over the payments ($1 merchant, $2
// environment): the table must equal it (a row whose every figure is zero equals no row).
const volumeDaysMismatchSQL = `WITH recomputed AS (
		SELECT (created AT TIME ZONE 'UTC')::date AS day, currency, sum(amount) AS gross, sum(amount_refunded) AS refunded,
			sum(fee_service_charge_currency) AS fees, count(*) AS payments
		FROM payments WHERE merchant_id = $1 AND environment = $2
			AND status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')
		GROUP BY 1, 2),
	kept AS (SELECT day, currency, gross, refunded, fees, payments FROM payment_volume_days
		WHERE merchant_id = $1 AND environment = $2)
	SELECT coalesce(r.day, k.day)::text || ' ' || coalesce(r.currency, k.currency) || ': kept ' ||
		coalesce(k.gross, 0) || '/' || coalesce(k.refunded, 0) || '/' || coalesce(k.fees, 0) || '/' || coalesce(k.payments, 0) ||
		', payments say ' || coalesce(r.gross, 0) || '/' || coalesce(r.refunded, 0) || '/' || coalesce(r.fees, 0) || '/' ||
		coalesce(r.payments, 0)
	FROM recomputed r FULL JOIN kept k ON k.day = r.day AND k.currency = r.currency
	WHERE (coalesce(r.gross, 0), coalesce(r.refunded, 0), coalesce(r.fees, 0), coalesce(r.payments, 0))
		<> (coalesce(k.gross, 0), coalesce(k.refunded, 0), coalesce(k.fees, 0), coalesce(k.payments, 0))
	ORDER BY 1`

// checkVolumeDays fails when scope's daily totals differ from a sum over its payments.
func checkVolumeDays(t *testing.T, db *sqlx.DB, scope core.Scope, step string) {
	t.Helper()
	var bad []string
	if err := db.Select(&bad, volumeDaysMismatchSQL, scope.MerchantID, string(scope.Env)); err != nil {
		t.Fatalf("after %s: %v", step, err)
	}
	if len(bad) > 0 {
		t.Fatalf("after %s: the daily totals differ from the payments:\n%s", step, strings.Join(bad, "\n"))
	}
}

// volumesFromPayments is the summary as it was computed before the daily totals: one sum
// over the window's captured payments.
func volumesFromPayments(t *testing.T, db *sqlx.DB, scope core.Scope, from, to time.Time) []apps.Volume {
	t.Helper()
	var rows []struct {
		Currency string `db:"currency"`
		Gross    int64  `db:"gross"`
		Refunded int64  `db:"refunded"`
		Fees     int64  `db:"fees"`
		Count    int64  `db:"n"`
	}
	if err := db.Select(&rows, `SELECT currency, sum(amount)::bigint AS gross, sum(amount_refunded)::bigint AS refunded,
			sum(fee_service_charge_currency)::bigint AS fees, count(*) AS n
		FROM payments WHERE merchant_id = $1 AND environment = $2 AND created >= $3 AND created < $4
			AND status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')
		GROUP BY currency ORDER BY currency`, scope.MerchantID, string(scope.Env), from, to); err != nil {
		t.Fatal(err)
	}
	out := make([]apps.Volume, 0, len(rows))
	for _, v := range rows {
		out = append(out, apps.Volume{Currency: core.Currency(v.Currency), Gross: v.Gross, Refunded: v.Refunded, Fees: v.Fees, Count: v.Count})
	}
	return out
}

// A random mix of card payments (succeeded and declined), SEPA debits (settled and failed),
// refunds of payments old and new, and disputes (opened, won, lost) in four currencies, run
// through the payments module over Postgres as the server runs them, across ten days: after
// every step the daily totals equal a sum over the payments, and the summary over windows
// ending at the step's time (1, 2 and 7 days, whole days read from the totals, partial ones
// from the payments) equals the sum over the window's payments.
func TestPaymentVolumeDaysEqualThePaymentsUnderARandomMix(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, db)
	clocks := &movingClocks{t: time.Date(2026, 11, 12, 7, 0, 0, 0, time.UTC)}
	svc, ch := chargeOn(db, checkoutUoW(db), clocks, core.SystemClock{}, sandboxes(db))
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.Tx { return tx })
	sweeper, err := payments.NewSweeper(postgres.NewPaymentStore(db), uow, bothEnvs(sandbox.New()), ch)
	if err != nil {
		t.Fatal(err)
	}
	refunder, err := payments.NewRefunder(payments.RefunderDeps{
		UoW:     postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) payments.RefundTx { return tx }),
		Refunds: postgres.NewRefundStore(db), Processors: map[core.Environment]ports.Refunder{core.EnvTest: sandbox.NewWithJournal(postgres.NewSandboxJournal(db))},
		Clocks: clocks, Wall: core.SystemClock{},
	})
	if err != nil {
		t.Fatal(err)
	}
	disputes, err := payments.NewDisputes(postgres.NewDisputeStore(db), uow, clocks)
	if err != nil {
		t.Fatal(err)
	}
	reader := postgres.NewAppReader(db)
	rng := rand.New(rand.NewSource(18))
	curs := []string{"eur", "usd", "gbp", "jpy"}
	sources := []string{visaUS, visaUS, visaDE, "4000000000000002", cardDisputed, cardDisputed, ibanSettles, ibanFails}
	var paid []string // payment ids
	for step := 0; step < 150; step++ {
		now := clocks.add(time.Duration(rng.Intn(4*3600)) * time.Second)
		var what string
		switch k := rng.Intn(10); {
		case k < 5 || len(paid) == 0:
			amount := int64(500 + rng.Intn(30000))
			src, cur := sources[rng.Intn(len(sources))], curs[rng.Intn(len(curs))]
			if len(src) == 22 {
				cur = "eur" // SEPA debits only EUR
			}
			s, err := svc.Create(ctx, core.Caller{Scope: scope, Onboarded: true}, checkout.CreateInput{Amount: &amount,
				Currency: cur, CustomerName: "Grace Hopper", CustomerEmail: "grace@example.com"})
			if err != nil {
				t.Fatalf("step %d: create: %v", step, err)
			}
			what = "payment with " + src
			res, err := pay(ctx, svc, s, src)
			var decline *checkout.DeclineError
			switch {
			case errors.As(err, &decline):
			case err != nil:
				t.Fatalf("step %d: %s: %v", step, what, err)
			case res.Session.Payment() != nil:
				paid = append(paid, res.Session.Payment().ID())
			}
		case k < 8:
			id := paid[rng.Intn(len(paid))]
			amount := int64(100 + rng.Intn(20000))
			what = fmt.Sprintf("refund of %d on %s", amount, id)
			if _, err := refunder.Refund(ctx, payments.RefundRequest{Scope: scope, PaymentID: id, Amount: &amount,
				Reason: payments.ReasonRequestedByCustomer}); err != nil {
				what += " (refused: " + err.Error() + ")"
			}
		default:
			what = "evidence"
			list, _, err := disputes.List(ctx, scope, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range list {
				if d.Status() == payments.DisputeNeedsResponse && rng.Intn(2) == 0 {
					text := "receipt"
					if rng.Intn(2) == 0 {
						text = payments.WinningEvidence
					}
					if _, err := disputes.SaveEvidence(ctx, payments.EvidenceRequest{Scope: scope, DisputeID: d.ID(),
						Text: text, Submit: true}); err != nil {
						t.Fatalf("step %d: evidence on %s: %v", step, d.ID(), err)
					}
				}
			}
		}
		checkVolumeDays(t, db, scope, fmt.Sprintf("step %d (%s)", step, what))
		if _, err := sweeper.ProcessDue(ctx, &scope, now); err != nil {
			t.Fatalf("step %d: payments sweep: %v", step, err)
		}
		checkVolumeDays(t, db, scope, fmt.Sprintf("step %d, the payments sweep (settlements, disputes opened)", step))
		if _, err := disputes.ProcessDue(ctx, &scope, now); err != nil {
			t.Fatalf("step %d: dispute sweep: %v", step, err)
		}
		checkVolumeDays(t, db, scope, fmt.Sprintf("step %d, the dispute sweep (disputes closed)", step))
		end := now.Truncate(time.Second).Add(time.Second)
		for _, days := range []int{1, 2, 7} {
			from := end.AddDate(0, 0, -days)
			got, err := reader.Volumes(ctx, scope, from, end)
			if err != nil {
				t.Fatal(err)
			}
			if want := volumesFromPayments(t, db, scope, from, end); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d, summary of %d days: %v, the payments say %v", step, days, got, want)
			}
		}
	}
	var kinds struct {
		Days, Refunded, Disputed, Won, Failed int
	}
	if err := db.Get(&kinds, `SELECT (SELECT count(*) FROM payment_volume_days WHERE merchant_id = $1) AS days,
		(SELECT count(*) FROM payments WHERE merchant_id = $1 AND amount_refunded > 0) AS refunded,
		(SELECT count(*) FROM payments WHERE merchant_id = $1 AND status = 'disputed') AS disputed,
		(SELECT count(*) FROM disputes WHERE merchant_id = $1 AND status = 'won') AS won,
		(SELECT count(*) FROM payments WHERE merchant_id = $1 AND status = 'failed') AS failed`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if kinds.Days < 8 || kinds.Refunded == 0 || kinds.Disputed == 0 || kinds.Won == 0 || kinds.Failed == 0 {
		t.Fatalf("the mix did not cover every kind of write: %+v", kinds)
	}
}

// Migration 00055 backfills the daily totals of the payments made before it: the same rows
// the payment writes keep (a refunded payment with its refund, a processing one not at all).
func TestPaymentVolumeDaysMigrationBackfillsThePayments(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	scope := pgtest.Merchant(t, db)
	svc := paymentsOn(db, fixedClocks{payNow})
	mustPay(t, svc, createSession(t, svc, scope), visaUS)
	b := mustPay(t, svc, createSession(t, svc, scope), visaUS).Payment()
	mustPay(t, svc, createSession(t, svc, scope), ibanSettles) // processing: not counted
	rf := refunderOn(t, db, sandbox.NewWithJournal(postgres.NewSandboxJournal(db)), core.SystemClock{})
	half := int64(1000)
	if _, err := rf.Refund(ctx, payments.RefundRequest{Scope: scope, PaymentID: b.ID(), Amount: &half, Reason: payments.ReasonDuplicate}); err != nil {
		t.Fatal(err)
	}
	read := func() []string {
		var rows []string
		if err := db.Select(&rows, `SELECT environment || ' ' || day || ' ' || currency || ' ' || gross || '/' || refunded || '/' ||
			fees || '/' || payments FROM payment_volume_days WHERE merchant_id = $1 ORDER BY 1`, scope.MerchantID); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	kept := read()
	if len(kept) != 1 || !strings.HasPrefix(kept[0], "test 2026-05-01 EUR 5000/1000/") || !strings.HasSuffix(kept[0], "/2") {
		t.Fatalf("kept by the writes: %v", kept)
	}
	if err := postgres.MigrateTo(ctx, db, 54); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.MigrateUp(ctx, db); err != nil {
		t.Fatal(err)
	}
	if got := read(); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Fatalf("backfilled %v, kept by the writes %v", got, kept)
	}
	checkVolumeDays(t, db, scope, "the backfill")
}

// The summary's window splits into whole UTC days and the partial ones around them.
func TestVolumeDaysSplitsTheWindow(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct{ from, to, first, last string }{
		{"2026-11-01T10:00:01Z", "2026-11-27T10:00:01Z", "2026-11-02T00:00:00Z", "2026-11-27T00:00:00Z"},
		{"2026-11-01T00:00:00Z", "2026-11-27T00:00:00Z", "2026-11-01T00:00:00Z", "2026-11-27T00:00:00Z"},           // whole days only
		{"2026-11-26T10:00:01Z", "2026-11-27T10:00:01Z", "2026-11-27T10:00:01Z", "2026-11-27T10:00:01Z"},           // no whole day
		{"2026-11-27T01:00:00+02:00", "2026-11-28T01:00:00+02:00", "2026-11-27T23:00:00Z", "2026-11-27T23:00:00Z"}, // UTC days
		{"2026-11-26T03:00:00+02:00", "2026-11-28T03:00:00+02:00", "2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z"},
	} {
		first, last := postgres.VolumeDays(at(c.from), at(c.to))
		if !first.Equal(at(c.first)) || !last.Equal(at(c.last)) {
			t.Errorf("%s – %s: %s – %s, want %s – %s", c.from, c.to, first, last, c.first, c.last)
		}
	}
}
