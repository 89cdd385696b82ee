package invoicepdf

import (
	"bytes"
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
