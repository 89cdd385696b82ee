package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/payments"
)

// The dashboard's read side of payments: pages with a status filter, the overview sums, the
// fee breakdown with the rate used, and the events about a payment and its session.
func TestPaymentQueries(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	other := pgtest.Merchant(t, db)
	// A day the bundled ECB sample quotes, so that a USD fee has a rate.
	svc := paymentsOn(db, fixedClocks{time.Date(2026, 11, 18, 10, 0, 0, 0, time.UTC)})
	ctx := context.Background()
	payIn := func(sc core.Scope, currency string, amount int64) *payments.Payment {
		t.Helper()
		in := sessionInput()
		in.Currency, in.Amount = currency, &amount
		s, err := svc.Create(ctx, core.Caller{Scope: sc, Onboarded: true}, in)
		if err != nil {
			t.Fatal(err)
		}
		return mustPay(t, svc, s, visaUS).Payment()
	}
	eur1 := payIn(scope, "eur", 2500)
	usd := payIn(scope, "usd", 10000)
	eur2 := payIn(scope, "eur", 1000)
	payIn(other, "eur", 9999)

	store := postgres.NewPaymentStore(db)
	q, err := payments.NewQueries(store, store, fx.NewSample())
	if err != nil {
		t.Fatal(err)
	}

	page, err := q.List(ctx, scope, core.ListQuery{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 3 || page.HasMore || page.Items[0].ID() != eur2.ID() || page.Items[2].ID() != eur1.ID() {
		t.Fatalf("list: %d items, more %v", len(page.Items), page.HasMore)
	}
	page, err = q.List(ctx, scope, core.ListQuery{Limit: 1, StartingAfter: eur2.ID()}, "succeeded")
	if err != nil || len(page.Items) != 1 || page.Items[0].ID() != usd.ID() || !page.HasMore {
		t.Fatalf("paged: %v %+v", err, page)
	}
	if page, err = q.List(ctx, scope, core.ListQuery{}, "failed"); err != nil || len(page.Items) != 0 {
		t.Fatalf("failed filter: %v %d", err, len(page.Items))
	}
	if _, err := q.List(ctx, scope, core.ListQuery{}, "paid"); err == nil {
		t.Fatal("unknown status accepted")
	}
	if _, err := q.List(ctx, scope, core.ListQuery{StartingAfter: "py_other"}, ""); err == nil {
		t.Fatal("foreign cursor accepted")
	}
	if _, err := q.Get(ctx, other, usd.ID()); err == nil {
		t.Fatal("another merchant read the payment")
	}

	sum, err := q.Summary(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Count != 3 || sum.SucceededCount != 3 || len(sum.Gross) != 2 ||
		sum.Gross[0] != core.NewMoney(3500, "EUR") || sum.Gross[1] != core.NewMoney(10000, "USD") {
		t.Fatalf("summary %+v", sum)
	}

	b, err := q.Breakdown(ctx, usd)
	if err != nil {
		t.Fatal(err)
	}
	f := usd.Fee()
	if b.TotalEUR != f.ServiceFeeEUR || b.ServiceEUR+b.PSPEUR != b.TotalEUR || b.TotalChargeCurrency != f.ServiceFeeChargeCurrency ||
		b.Net != 10000-f.ServiceFeeChargeCurrency || b.Rate == "1" || b.Rate == "" || !b.RateDate.Equal(f.RateDate) {
		t.Fatalf("breakdown %+v of fee %+v", b, f)
	}
	if b, err := q.Breakdown(ctx, eur1); err != nil || b.Rate != "1" {
		t.Fatalf("EUR breakdown %+v %v", b, err)
	}

	ev := events.NewService(postgres.NewEventStore(db))
	about, err := ev.About(ctx, scope, usd.ID(), *usd.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	if len(about) == 0 {
		t.Fatal("no events about the payment")
	}
	for _, e := range about {
		if e.Scope != scope {
			t.Fatalf("event of another scope: %+v", e.Scope)
		}
	}
	if foreign, err := ev.About(ctx, other, usd.ID(), *usd.SessionID()); err != nil || len(foreign) != 0 {
		t.Fatalf("another merchant saw %d events (%v)", len(foreign), err)
	}
}
