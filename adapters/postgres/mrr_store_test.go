package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

// Record writes a run of days in one statement: every midnight of the run with the same
// amounts (none for a day without revenue), leaving a day recorded before as it was.
func TestMRRRecordWritesARunOfDaysAndKeepsRecordedOnes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) billing.MRRTx { return tx })
	store := postgres.NewMRRStore(db)
	ctx := context.Background()
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	record := func(from, to time.Time, mrr ...core.Money) {
		t.Helper()
		if err := uow.Do(ctx, func(ctx context.Context, tx billing.MRRTx) error {
			return tx.MRR().Record(ctx, scope, from, to, time.Now(), mrr)
		}); err != nil {
			t.Fatal(err)
		}
	}
	record(day(2), day(4), core.NewMoney(900, "eur"), core.NewMoney(1500, "usd"))
	record(day(4), day(6), core.NewMoney(100, "eur")) // the 4th stays as it was
	record(day(7), day(7))                            // a day without revenue
	days, err := store.MRRDays(ctx, scope, day(1), day(8))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range days {
		var ms []string
		for _, m := range d.MRR {
			ms = append(ms, fmt.Sprintf("%d %s", m.Amount(), m.Currency()))
		}
		slices.Sort(ms)
		got = append(got, d.Day.Format("02")+": "+strings.Join(ms, ", "))
	}
	want := []string{"02: 1500 usd, 900 eur", "03: 1500 usd, 900 eur", "04: 1500 usd, 900 eur", "05: 100 eur", "06: 100 eur", "07: "}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("days %q, want %q", got, want)
	}
}
