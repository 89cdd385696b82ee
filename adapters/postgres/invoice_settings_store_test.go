package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

// A merchant's prefix is written in a unit of work, read back by its merchant only (outside a
// transaction, and on one with the merchant's name), replaced by a later choice; the database refuses a prefix outside the rule; the last number of a scope
// and year is 0 until one is taken.
func TestInvoiceSettingsStore(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	st := postgres.NewInvoiceSettingsStore(db)
	uow := postgres.Bind(postgres.NewUnitOfWork(db), func(tx *postgres.Tx) invoicing.SettingsTx { return tx })
	a, b := pgtest.Merchant(t, db), pgtest.Merchant(t, db)
	set := func(merchant, p string, at time.Time) error {
		return uow.Do(ctx, func(ctx context.Context, tx invoicing.SettingsTx) error {
			return tx.InvoiceSettings().SetInvoicePrefix(ctx, merchant, p, at)
		})
	}
	if p, u, err := st.InvoicePrefix(ctx, a.MerchantID); err != nil || p != "" || u != nil {
		t.Fatalf("before any choice: %q %v %v", p, u, err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := set(a.MerchantID, "ACME", t0); err != nil {
		t.Fatal(err)
	}
	if err := set(a.MerchantID, "SHOP24", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p, u, err := st.InvoicePrefix(ctx, a.MerchantID); err != nil || p != "SHOP24" || u == nil || !u.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after two choices: %q %v %v", p, u, err)
	}
	if p, _, err := st.InvoicePrefix(ctx, b.MerchantID); err != nil || p != "" {
		t.Fatalf("another merchant sees %q (%v)", p, err)
	}
	// On a unit of work's transaction: the chosen prefix ("" for none) with the merchant's name.
	chosen := func(merchant string) (string, string, error) {
		var p, name string
		err := uow.Do(ctx, func(ctx context.Context, tx invoicing.SettingsTx) (err error) {
			p, name, err = tx.InvoiceSettings().ChosenPrefix(ctx, merchant)
			return err
		})
		return p, name, err
	}
	if p, name, err := chosen(a.MerchantID); err != nil || p != "SHOP24" || name != "Test merchant" {
		t.Fatalf("chosen prefix in a unit of work: %q %q %v", p, name, err)
	}
	if p, name, err := chosen(b.MerchantID); err != nil || p != "" || name != "Test merchant" {
		t.Fatalf("no chosen prefix: %q %q %v", p, name, err)
	}
	if _, _, err := chosen("acct_unknown"); err == nil {
		t.Fatal("an unknown merchant has a prefix")
	}
	if err := set(b.MerchantID, "ab", t0); err == nil {
		t.Fatal("the database kept a lower-case prefix")
	}
	if n, err := st.LastNumber(ctx, a, 2026); err != nil || n != 0 {
		t.Fatalf("last number before any: %d %v", n, err)
	}
	if _, err := db.Exec(`INSERT INTO invoice_number_counters (merchant_id, environment, year, last) VALUES ($1, $2, 2026, 7)`,
		a.MerchantID, string(a.Env)); err != nil {
		t.Fatal(err)
	}
	if n, err := st.LastNumber(ctx, a, 2026); err != nil || n != 7 {
		t.Fatalf("last number: %d %v", n, err)
	}
	if n, err := st.LastNumber(ctx, core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}, 2026); err != nil || n != 0 {
		t.Fatalf("live last number: %d %v", n, err)
	}
}
