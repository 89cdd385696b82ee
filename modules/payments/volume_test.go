package payments

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A new payment counts in the UTC day it was created only in a captured status (not while
// processing); a state
// change moves its day's totals by what it changed; a record without one moves nothing, and
// asking twice gives the same change (a unit of work run again writes the same).
func TestVolumeChangesOfAPayment(t *testing.T) {
	rec := dueRecord(t, "ch_1", StatusSucceeded, MethodCard)
	rec.Payment.fee.ServiceFeeChargeCurrency = 40
	c := rec.InsertedVolume()
	if c.Gross != 1000 || c.Refunded != 0 || c.Fees != 40 || c.Count != 1 || c.Currency != "EUR" || c.Scope != dueScope ||
		!c.Day.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("inserted: %+v", c)
	}
	if c := rec.SavedVolume(); !c.IsZero() {
		t.Fatalf("no state change moves: %+v", c)
	}
	if _, err := rec.ApplyRefund(300); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.ApplyRefund(200); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if c := rec.SavedVolume(); c.Refunded != 500 || c.Gross != 0 || c.Fees != 0 || c.Count != 0 || c.Day.Day() != 20 {
			t.Fatalf("two refunds: %+v", c)
		}
	}

	processing := dueRecord(t, "ch_2", StatusProcessing, MethodSEPADebit)
	if c := processing.InsertedVolume(); !c.IsZero() {
		t.Fatalf("a processing payment counts: %+v", c)
	}
	if err := processing.Settle(true, "", "", dueT0.Add(72*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if c := processing.SavedVolume(); c.Gross != 1000 || c.Count != 1 || c.Day.Day() != 20 {
		t.Fatalf("settled days later, counted in the day it was created: %+v", c)
	}
	bad := dueRecord(t, "ch_3", StatusProcessing, MethodSEPADebit)
	if err := bad.Settle(false, "insufficient_funds", "no", dueT0.Add(72*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if c := bad.SavedVolume(); !c.IsZero() {
		t.Fatalf("a failed settlement moves: %+v", c)
	}
}

// Every write of a payment in this package goes through insertPayment or savePayment, which
// move its day's volume totals with it: a direct repository call elsewhere would leave them
// behind the payments.
func TestPaymentWritesMoveTheVolumeTotals(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "volume.go" {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Save" && sel.Sel.Name != "Insert") {
				return true
			}
			if inner, ok := sel.X.(*ast.CallExpr); ok {
				if is, ok := inner.Fun.(*ast.SelectorExpr); ok && is.Sel.Name == "Payments" {
					t.Errorf("%s: Payments().%s called directly; use insertPayment or savePayment", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// The volume changes of a unit of work's payments are summed per scope, day and currency,
// in the lock order of their rows; a sum that moves nothing is left out.
func TestSumVolumes(t *testing.T) {
	d1, d2 := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	other := dueScope
	other.MerchantID = "mer_" + strings.Repeat("z", 8)
	got := sumVolumes([]VolumeChange{
		{Scope: dueScope, Day: d2, Currency: "EUR", Gross: 100, Fees: 4, Count: 1},
		{Scope: other, Day: d1, Currency: "EUR", Gross: 7, Count: 1},
		{Scope: dueScope, Day: d1, Currency: "USD", Gross: 50, Count: 1},
		{Scope: dueScope, Day: d2, Currency: "EUR", Gross: 200, Fees: 6, Count: 1},
		{Scope: dueScope, Day: d1, Currency: "EUR"},
		{Scope: dueScope, Day: d1, Currency: "USD", Gross: -50, Count: -1},
	})
	want := []VolumeChange{
		{Scope: dueScope, Day: d2, Currency: "EUR", Gross: 300, Fees: 10, Count: 2},
		{Scope: other, Day: d1, Currency: "EUR", Gross: 7, Count: 1},
	}
	if dueScope.MerchantID > other.MerchantID {
		want[0], want[1] = want[1], want[0]
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("sums %+v, want %+v", got, want)
	}
}
