package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

var errBoom = errors.New("boom")

// A number taken in a unit of work that rolls back is given back: the next send takes it.
// Numbers are per merchant, environment and year.
func TestInvoiceNumbersAreGivenBackOnRollback(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) invoicing.Tx { return tx })
	ctx := context.Background()
	next := func(s core.Scope, year int, fail bool) int64 {
		t.Helper()
		var n int64
		err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
			var err error
			if n, err = tx.Invoices().NextNumber(ctx, s, year); err != nil {
				return err
			}
			if fail {
				return errBoom
			}
			return nil
		})
		if fail != errors.Is(err, errBoom) || (!fail && err != nil) {
			t.Fatalf("next: %v", err)
		}
		return n
	}
	if n := next(scope, 2026, false); n != 1 {
		t.Fatalf("first %d", n)
	}
	if n := next(scope, 2026, true); n != 2 {
		t.Fatalf("rolled back %d", n)
	}
	if n := next(scope, 2026, false); n != 2 {
		t.Fatalf("after the rollback %d, want 2 again", n)
	}
	if n := next(scope, 2027, false); n != 1 {
		t.Fatalf("next year %d", n)
	}
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	if n := next(live, 2026, false); n != 1 {
		t.Fatalf("live %d", n)
	}
	// Concurrent takers of one counter queue on its row: 20 distinct numbers, none skipped.
	var mu sync.Mutex
	got := map[int64]bool{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := next(scope, 2030, false)
			mu.Lock()
			got[n] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i := int64(1); i <= 20; i++ {
		if !got[i] {
			t.Fatalf("number %d missing: %v", i, got)
		}
	}
}

// An invoice round-trips through the repository and the store, lines, rates and charge state
// included.
func TestInvoiceRoundTrip(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) invoicing.Tx { return tx })
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	pid, prod := "price_1", "prod_1"
	inv := invoicing.NewDraft(scope, invoicing.Draft{Currency: "EUR", CustomerName: "Ada", CustomerEmail: "ada@example.com",
		Lines: []invoicing.Line{{Description: "A", Quantity: 3, UnitAmount: 333, VATRate: 1900},
			{Description: "B", Quantity: 1, UnitAmount: 1500, VATRate: 750, PriceID: &pid, ProductID: &prod, Locked: true, Currency: "EUR"}},
		DaysUntilDue: 7, Metadata: map[string]string{"k": "v"}}, now)
	if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error { return tx.Invoices().Insert(ctx, inv) }); err != nil {
		t.Fatal(err)
	}
	if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
		locked, err := tx.Invoices().Lock(ctx, scope, inv.ID())
		if err != nil {
			return err
		}
		if err := locked.Finalize("ACME", 1, "tok-"+inv.ID(), now); err != nil {
			return err
		}
		return tx.Invoices().Save(ctx, locked)
	}); err != nil {
		t.Fatal(err)
	}
	st := postgres.NewInvoiceStore(db)
	got, err := st.ByToken(ctx, "tok-"+inv.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != invoicing.StatusOpen || *got.Number() != "ACME-INV-2026-0001" || got.Totals() != inv.Totals() ||
		!got.Lines()[1].Locked || *got.Lines()[1].PriceID != pid || got.Lines()[1].VATRate != 750 || got.Metadata()["k"] != "v" {
		t.Fatalf("round trip: %+v", got.Snapshot())
	}
	if _, err := st.Get(ctx, core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}, inv.ID()); !errors.Is(err, invoicing.ErrNotFound) {
		t.Fatalf("other environment: %v", err)
	}
}

// Numbering contention is per merchant, environment and year only: while a send of one
// merchant holds its counter row, sends of another merchant, of the other environment and of
// another year go through at once, and a second send of the same counter waits.
func TestInvoiceNumberingContendsOnlyPerCounter(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	a, b := pgtest.Merchant(t, db), pgtest.Merchant(t, db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) invoicing.Tx { return tx })
	ctx := context.Background()
	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
			if _, err := tx.Invoices().NextNumber(ctx, a, 2026); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	take := func(s core.Scope, year int, within time.Duration) error {
		ctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		return uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
			_, err := tx.Invoices().NextNumber(ctx, s, year)
			return err
		})
	}
	for name, c := range map[string]struct {
		s    core.Scope
		year int
	}{
		"another merchant":      {b, 2026},
		"the other environment": {core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}, 2026},
		"another year":          {a, 2027},
	} {
		if err := take(c.s, c.year, 2*time.Second); err != nil {
			t.Errorf("%s waited for the held counter: %v", name, err)
		}
	}
	if err := take(a, 2026, 300*time.Millisecond); err == nil {
		t.Error("a second send of the held counter did not wait for it")
	}
	close(release)
}

// NextNumbers reserves a block of numbers per merchant, environment and year in one
// statement: the blocks follow the single takes and are followed by them, a rolled-back block
// is given back whole, and blocks and single takes at once share no number and skip none.
func TestInvoiceNumberBlocks(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	a, b := pgtest.Merchant(t, db), pgtest.Merchant(t, db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) invoicing.Tx { return tx })
	ctx := context.Background()
	blocks := func(fail bool, bs ...invoicing.NumberBlock) []int64 {
		t.Helper()
		var first []int64
		err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
			var err error
			if first, err = tx.Invoices().NextNumbers(ctx, bs); err != nil {
				return err
			}
			if fail {
				return errBoom
			}
			return nil
		})
		if fail != errors.Is(err, errBoom) || (!fail && err != nil) {
			t.Fatalf("next numbers: %v", err)
		}
		return first
	}
	single := func(s core.Scope, year int) int64 {
		t.Helper()
		var n int64
		if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
			var err error
			n, err = tx.Invoices().NextNumber(ctx, s, year)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	live := core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}
	if got := blocks(false, invoicing.NumberBlock{Scope: a, Year: 2026, Count: 3}, invoicing.NumberBlock{Scope: b, Year: 2026, Count: 2},
		invoicing.NumberBlock{Scope: a, Year: 2027, Count: 1}, invoicing.NumberBlock{Scope: live, Year: 2026, Count: 4}); fmt.Sprint(got) != "[1 1 1 1]" {
		t.Fatalf("first blocks start at %v, want [1 1 1 1]", got)
	}
	if n := single(a, 2026); n != 4 {
		t.Fatalf("after a block of 3: %d, want 4", n)
	}
	if got := blocks(true, invoicing.NumberBlock{Scope: a, Year: 2026, Count: 5}); fmt.Sprint(got) != "[5]" {
		t.Fatalf("rolled-back block starts at %v", got)
	}
	if got := blocks(false, invoicing.NumberBlock{Scope: b, Year: 2026, Count: 2}, invoicing.NumberBlock{Scope: a, Year: 2026, Count: 2}); fmt.Sprint(got) != "[3 5]" {
		t.Fatalf("after the rollback the blocks start at %v, want [3 5] (the rolled-back numbers given back)", got)
	}
	if n := single(a, 2026); n != 7 {
		t.Fatalf("after the blocks: %d, want 7", n)
	}
	if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
		_, err := tx.Invoices().NextNumbers(ctx, []invoicing.NumberBlock{{Scope: a, Year: 2026, Count: 1}, {Scope: a, Year: 2026, Count: 1}})
		return err
	}); err == nil {
		t.Fatal("a repeated scope and year was taken")
	}
	// Blocks of 3 and single takes of one counter at once: 10×3 + 10 numbers, each once.
	var mu sync.Mutex
	got := map[int64]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ns []int64
			if i%2 == 0 {
				f := blocks(false, invoicing.NumberBlock{Scope: a, Year: 2030, Count: 3})[0]
				ns = []int64{f, f + 1, f + 2}
			} else {
				ns = []int64{single(a, 2030)}
			}
			mu.Lock()
			for _, n := range ns {
				got[n]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i := int64(1); i <= 40; i++ {
		if got[i] != 1 {
			t.Fatalf("number %d taken %d times: %v", i, got[i], got)
		}
	}
	if len(got) != 40 {
		t.Fatalf("%d numbers, want 40", len(got))
	}
}

// InsertMany writes invoices as Insert does, in one statement: they read back the same.
func TestInvoiceInsertMany(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) invoicing.Tx { return tx })
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	mk := func(n int64, start, end int64, memo *string) *invoicing.Invoice {
		pid, prod := "price_1", "prod_1"
		inv := invoicing.NewDraft(scope, invoicing.Draft{Currency: "EUR", CustomerName: "Ada", CustomerEmail: "ada@example.com",
			Lines: []invoicing.Line{{Description: "Plan", Quantity: 2, UnitAmount: 900, PriceID: &pid, ProductID: &prod, Locked: true, Currency: "EUR"},
				{Description: "Proration", Quantity: 1, UnitAmount: -100, PriceID: &pid, Locked: true, Currency: "EUR"}},
			Memo: memo, Metadata: map[string]string{"k": "v"}}, now)
		if err := inv.Finalize("ACME", n, core.NewSecretPart(), now); err != nil {
			t.Fatal(err)
		}
		s := inv.Snapshot()
		sub := "sub_" + core.NewSecretPart()
		s.Subscription, s.StartingBalance, s.EndingBalance = &sub, start, end
		return invoicing.Rehydrate(s)
	}
	memo := "thanks"
	one, two, three := mk(1, 0, 0, nil), mk(2, -300, 0, &memo), mk(3, -5000, -3300, nil)
	single := mk(4, 0, 0, nil)
	if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
		if err := tx.Invoices().InsertMany(ctx, []*invoicing.Invoice{one, two, three}); err != nil {
			return err
		}
		return tx.Invoices().Insert(ctx, single)
	}); err != nil {
		t.Fatal(err)
	}
	st := postgres.NewInvoiceStore(db)
	read := func(inv *invoicing.Invoice) invoicing.Snapshot {
		got, err := st.Get(ctx, scope, inv.ID())
		if err != nil {
			t.Fatal(err)
		}
		return got.Snapshot()
	}
	// The one inserted alone is the yardstick: what Insert makes of an invoice on a read.
	if w, g := single.Snapshot(), read(single); !reflect.DeepEqual(w, g) {
		t.Fatalf("Insert round trip differs:\n got %+v\nwant %+v", g, w)
	}
	for _, inv := range []*invoicing.Invoice{one, two, three} {
		if w, g := inv.Snapshot(), read(inv); !reflect.DeepEqual(w, g) {
			t.Fatalf("InsertMany round trip differs:\n got %+v\nwant %+v", g, w)
		}
	}
	// A number the merchant has already is refused, and none of the batch is written.
	four, dup := mk(5, 0, 0, nil), mk(1, 0, 0, nil)
	if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
		return tx.Invoices().InsertMany(ctx, []*invoicing.Invoice{four, dup})
	}); err == nil {
		t.Fatal("a repeated number was written")
	}
	if _, err := st.Get(ctx, scope, four.ID()); !errors.Is(err, invoicing.ErrNotFound) {
		t.Fatalf("a failed batch wrote part of itself: %v", err)
	}
}

// LockMany reads what Lock reads, in the order asked (a charge batch's payables locked with
// one statement); an unknown invoice, or one of another scope, is ErrNotFound.
func TestInvoiceLockMany(t *testing.T) {
	t.Parallel()
	_, scope, uow, _, invs := finalizedInvoices(t, 3)
	ctx := context.Background()
	refs := []payments.PayableRef{{Scope: scope, ID: invs[2].ID()}, {Scope: scope, ID: invs[0].ID()}, {Scope: scope, ID: invs[1].ID()}}
	if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
		got, err := tx.Invoices().LockMany(ctx, refs)
		if err != nil {
			return err
		}
		if len(got) != len(refs) {
			t.Fatalf("%d invoices locked of %d", len(got), len(refs))
		}
		for i, ref := range refs {
			one, err := tx.Invoices().Lock(ctx, scope, ref.ID)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got[i].Snapshot(), one.Snapshot()) {
				t.Errorf("lock many %d:\n got %+v\nwant %+v", i, got[i].Snapshot(), one.Snapshot())
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []payments.PayableRef{{Scope: scope, ID: "in_unknown"}, {Scope: core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}, ID: invs[0].ID()}} {
		err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
			_, err := tx.Invoices().LockMany(ctx, []payments.PayableRef{refs[0], bad})
			return err
		})
		if !errors.Is(err, invoicing.ErrNotFound) {
			t.Fatalf("lock many with %+v: %v, want ErrNotFound", bad, err)
		}
	}
}

// SaveMany writes what Save writes, in one statement: the invoices read back as saved; one
// that is not there (another scope's), or one given twice, writes none of the batch.
func TestInvoiceSaveMany(t *testing.T) {
	t.Parallel()
	db, scope, uow, now, invs := finalizedInvoices(t, 4)
	ctx := context.Background()
	// Each changed in what a charge changes: the attempt in flight, a kept 3-D Secure action,
	// the dunning fields, the memo and metadata.
	changed := func(inv *invoicing.Invoice, n int) *invoicing.Invoice {
		s := inv.Snapshot()
		later := now.Add(time.Duration(n) * time.Hour)
		memo, stage := fmt.Sprintf("memo %d", n), "notice"
		s.Memo, s.Metadata, s.Updated, s.DunningStage, s.NextPaymentAttempt = &memo, map[string]string{"n": memo}, later, &stage, &later
		s.Charge = invoicing.ChargeState{Charging: fmt.Sprintf("%s:%d", s.ID, n), Attempts: n, SavedMethod: "pm_1",
			Pending: &payments.CustomerAction{ProcessorRef: "ch_1", Method: ports.MethodCard, Action: ports.ChargeAction{Kind: ports.ActionThreeDSecure}}}
		return invoicing.Rehydrate(s)
	}
	st := postgres.NewInvoiceStore(db)
	read := func(inv *invoicing.Invoice) invoicing.Snapshot {
		got, err := st.Get(ctx, scope, inv.ID())
		if err != nil {
			t.Fatal(err)
		}
		return got.Snapshot()
	}
	other := invoicing.Rehydrate(func() invoicing.Snapshot {
		s := invs[3].Snapshot()
		s.Scope = core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
		return s
	}())
	for name, bad := range map[string][]*invoicing.Invoice{
		"another scope's": {changed(invs[0], 1), other},
		"one twice":       {changed(invs[0], 1), changed(invs[0], 2)},
	} {
		err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error { return tx.Invoices().SaveMany(ctx, bad) })
		if err == nil {
			t.Fatalf("a batch with %s was written", name)
		}
		if w, g := invs[0].Snapshot(), read(invs[0]); !reflect.DeepEqual(w, g) {
			t.Fatalf("a batch with %s wrote part of itself: %+v", name, g)
		}
	}
	// The one saved alone is the yardstick: what Save makes of an invoice on a read.
	one, two, three := changed(invs[0], 1), changed(invs[1], 2), changed(invs[2], 3)
	if err := uow.Do(ctx, func(ctx context.Context, tx invoicing.Tx) error {
		if err := tx.Invoices().SaveMany(ctx, nil); err != nil {
			return err
		}
		if err := tx.Invoices().SaveMany(ctx, []*invoicing.Invoice{two, one}); err != nil {
			return err
		}
		return tx.Invoices().Save(ctx, three)
	}); err != nil {
		t.Fatal(err)
	}
	if w, g := three.Snapshot(), read(three); !reflect.DeepEqual(w, g) {
		t.Fatalf("Save round trip differs:\n got %+v\nwant %+v", g, w)
	}
	for _, inv := range []*invoicing.Invoice{one, two} {
		if w, g := inv.Snapshot(), read(inv); !reflect.DeepEqual(w, g) {
			t.Fatalf("SaveMany round trip differs:\n got %+v\nwant %+v", g, w)
		}
	}
	if w, g := invs[3].Snapshot(), read(invs[3]); !reflect.DeepEqual(w, g) {
		t.Fatalf("an invoice not in the batch changed: %+v", g)
	}
}

// finalizedInvoices writes n open invoices of a new merchant with one InsertMany (the first
// has one line of quantity 1, the second 2, …) for the batch statements' tests.
func finalizedInvoices(t *testing.T, n int) (*sqlx.DB, core.Scope, ports.UnitOfWorkOf[invoicing.Tx], time.Time, []*invoicing.Invoice) {
	t.Helper()
	db := pgtest.New(t)
	scope := pgtest.Merchant(t, db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) invoicing.Tx { return tx })
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var invs []*invoicing.Invoice
	for i := range n {
		inv := invoicing.NewDraft(scope, invoicing.Draft{Currency: "EUR", CustomerName: "Ada", CustomerEmail: "ada@example.com",
			Lines: []invoicing.Line{{Description: "A", Quantity: int64(i + 1), UnitAmount: 333, VATRate: 1900}}, Metadata: map[string]string{"k": "v"}}, now)
		if err := inv.Finalize("ACME", int64(i+1), core.NewSecretPart(), now); err != nil {
			t.Fatal(err)
		}
		invs = append(invs, inv)
	}
	if err := uow.Do(context.Background(), func(ctx context.Context, tx invoicing.Tx) error { return tx.Invoices().InsertMany(ctx, invs) }); err != nil {
		t.Fatal(err)
	}
	return db, scope, uow, now, invs
}
