package billing_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
)

// A merchant's adjustment changes the customer's balance in its currency (negative: credit),
// with reason adjustment and the note; the answer carries the balance after it.
func TestAdjustBalanceAddsToTheCustomersBalance(t *testing.T) {
	svc, f, _ := newService(t)
	c, _, _ := svc.FindOrCreateCustomer(ctx, scope, "Ada Lovelace", "ada@example.com")
	tx, ending, err := svc.AdjustBalance(ctx, scope, c.ID(), billing.Adjustment{Amount: -500, Currency: "eur", Description: "Goodwill"})
	if err != nil || ending != -500 || tx.Reason != billing.BalanceAdjustment || tx.Currency != "EUR" || tx.Description != "Goodwill" ||
		tx.Subscription != "" || !strings.HasPrefix(tx.ID, "cbtxn_") {
		t.Fatalf("credit: %+v %d %v", tx, ending, err)
	}
	if _, ending, err = svc.AdjustBalance(ctx, scope, c.ID(), billing.Adjustment{Amount: 1200, Currency: "EUR"}); err != nil || ending != 700 {
		t.Fatalf("debit: %d %v", ending, err)
	}
	if _, ending, err = svc.AdjustBalance(ctx, scope, c.ID(), billing.Adjustment{Amount: 300, Currency: "USD"}); err != nil || ending != 300 {
		t.Fatalf("another currency: %d %v", ending, err)
	}
	if b, _ := f.CustomerBalances(ctx, scope, c.ID()); b["EUR"] != 700 || b["USD"] != 300 {
		t.Fatalf("balances %v", b)
	}
}

// Each invalid field is refused at its param, and nothing is written; another scope's
// customer is not found.
func TestAdjustBalanceRefusesBadFieldsAndForeignCustomers(t *testing.T) {
	svc, f, _ := newService(t)
	c, _, _ := svc.FindOrCreateCustomer(ctx, scope, "Ada Lovelace", "ada@example.com")
	for _, bad := range []struct {
		adj         billing.Adjustment
		code, param string
	}{
		{billing.Adjustment{Amount: 0, Currency: "EUR"}, "amount_invalid", "amount"},
		{billing.Adjustment{Amount: core.MaxAmount + 1, Currency: "EUR"}, "amount_invalid", "amount"},
		{billing.Adjustment{Amount: -core.MaxAmount - 1, Currency: "EUR"}, "amount_invalid", "amount"},
		{billing.Adjustment{Amount: 100, Currency: "EURO"}, "currency_unsupported", "currency"},
		{billing.Adjustment{Amount: 100, Currency: ""}, "currency_unsupported", "currency"},
		{billing.Adjustment{Amount: 100, Currency: "EUR", Description: strings.Repeat("é", 351)}, "description_invalid", "description"},
	} {
		_, _, err := svc.AdjustBalance(ctx, scope, c.ID(), bad.adj)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != bad.code || ce.Param != bad.param {
			t.Errorf("%+v: %v, want %s at %s", bad.adj, err, bad.code, bad.param)
		}
	}
	if _, _, err := svc.AdjustBalance(ctx, scope, c.ID(), billing.Adjustment{Amount: 1, Currency: "EUR", Description: strings.Repeat("é", 350)}); err != nil {
		t.Fatalf("350 characters: %v", err)
	}
	for _, other := range []core.Scope{{MerchantID: "mer_2", Env: core.EnvTest}, {MerchantID: scope.MerchantID, Env: core.EnvLive}} {
		if _, _, err := svc.AdjustBalance(ctx, other, c.ID(), billing.Adjustment{Amount: 100, Currency: "EUR"}); !errors.Is(err, billing.ErrCustomerNotFound) {
			t.Errorf("%v: %v, want customer_not_found", other, err)
		}
	}
	if b, _ := f.CustomerBalances(ctx, scope, c.ID()); len(b) != 1 || b["EUR"] != 1 {
		t.Fatalf("balances %v, want only the valid adjustment", b)
	}
}
