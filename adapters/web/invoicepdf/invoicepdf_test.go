package invoicepdf

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

func TestRenderWritesAPDF(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var lines []invoicing.Line
	for range 60 { // more than one page
		lines = append(lines, invoicing.Line{Description: "Beratung für Müller & Söhne — Stunde", Quantity: 2, UnitAmount: 12345, VATRate: 1900})
	}
	inv := invoicing.NewDraft(core.Scope{MerchantID: "mer_1", Env: core.EnvTest}, invoicing.Draft{Currency: "EUR",
		CustomerName: "Ada", CustomerEmail: "ada@example.com", Lines: lines, DaysUntilDue: 30}, now)
	if err := inv.Finalize("ACME", 1, "tok", now); err != nil {
		t.Fatal(err)
	}
	b, err := Render(&invoicing.Hosted{Invoice: inv, Merchant: invoicing.Merchant{Name: "Acme GmbH"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b, []byte("%%EOF")) || len(b) < 2000 {
		t.Fatalf("not a PDF: %d bytes, %q", len(b), b[:min(len(b), 16)])
	}
	if n := bytes.Count(b, []byte("/Type /Page\n")) + bytes.Count(b, []byte("/Type /Page ")); n < 2 {
		t.Logf("pages marker count %d (layout check only)", n)
	}
}

// balanceInvoice is an open weekly renewal of 10.00 that took 7.50 of the customer's 8.57 of
// credit: 2.50 is left to pay.
func balanceInvoice(t *testing.T, start, end int64) *invoicing.Invoice {
	t.Helper()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	inv := invoicing.NewDraft(core.Scope{MerchantID: "mer_1", Env: core.EnvTest}, invoicing.Draft{Currency: "EUR",
		CustomerName: "Ada", CustomerEmail: "ada@example.com", DaysUntilDue: 0,
		Lines: []invoicing.Line{{Description: "Weekly plan", Quantity: 1, UnitAmount: 1000}}}, now)
	if err := inv.Finalize("ACME", 1, "tok", now); err != nil {
		t.Fatal(err)
	}
	s := inv.Snapshot()
	s.StartingBalance, s.EndingBalance = start, end
	return invoicing.Rehydrate(s)
}

func rowsText(rows []totalRow) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.label+": "+r.value)
	}
	return out
}

// An invoice that took the customer's credit shows it between the total and the amount due,
// so that total + applied balance − amount paid = amount due (10.00 − 7.50 = 2.50).
func TestTotalsShowTheAppliedBalance(t *testing.T) {
	inv := balanceInvoice(t, -857, -107)
	got := rowsText(totalRows(inv))
	want := []string{"Subtotal: 10.00 EUR", "VAT: 0.00 EUR", "Total: 10.00 EUR", "Applied balance: -7.50 EUR",
		"Amount paid: 0.00 EUR", "Amount due: 2.50 EUR"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// An amount owed (3.00) is added: 13.00 due.
	got = rowsText(totalRows(balanceInvoice(t, 300, 0)))
	if got[3] != "Applied balance: 3.00 EUR" || got[5] != "Amount due: 13.00 EUR" {
		t.Fatalf("owed rows %q", got)
	}
	if b, err := Render(&invoicing.Hosted{Invoice: inv, Merchant: invoicing.Merchant{Name: "Acme GmbH"}}); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("render: %v", err)
	}
	// An invoice that met no balance has no such row.
	for _, r := range totalRows(balanceInvoice(t, 0, 0)) {
		if r.label == "Applied balance" {
			t.Fatalf("applied balance shown without a balance: %q", rowsText(totalRows(balanceInvoice(t, 0, 0))))
		}
	}
}
