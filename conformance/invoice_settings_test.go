package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The invoice number prefix, a merchant setting of the dashboard (GET|POST /api/v1/settings).
func TestInvoiceSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	year := time.Now().UTC().Year()

	getSettings := func(t *testing.T, o *DashOwner) dash.Settings {
		t.Helper()
		r, err := o.Client.GetSettingsWithResponse(ctx)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("settings: %v %d %s", err, r.StatusCode(), r.Body)
		}
		return *r.JSON200
	}
	setPrefix := func(t *testing.T, o *DashOwner, p string) dash.Settings {
		t.Helper()
		r, err := o.Client.UpdateSettingsWithResponse(ctx, nil, dash.SettingsUpdate{InvoicePrefix: p})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("set prefix %q: %v %d %s", p, err, r.StatusCode(), r.Body)
		}
		return *r.JSON200
	}

	harness.Rule(t, "D15", "settings: the default prefix is the first four letters or digits of the merchant name, upper case", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t) // "Dashboard …"
		s := getSettings(t, o)
		want := fmt.Sprintf("DASH-INV-%d-0001", year)
		if s.Object != "settings" || s.InvoicePrefix != "DASH" || s.DefaultInvoicePrefix != "DASH" || s.Updated != nil ||
			s.NextInvoiceNumber != want {
			t.Fatalf("settings %+v, want prefix DASH, next %s", s, want)
		}
	})

	harness.Rule(t, "D15", "settings: a valid prefix is kept and the next invoice takes it", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		for _, p := range []string{"ABC", "SHOP2026", "ABCDEFGHIJ12", "123"} {
			s := setPrefix(t, o, p)
			if s.InvoicePrefix != p || s.DefaultInvoicePrefix != "DASH" || s.Updated == nil ||
				s.NextInvoiceNumber != fmt.Sprintf("%s-INV-%d-0001", p, year) {
				t.Fatalf("after %q: %+v", p, s)
			}
			if g := getSettings(t, o); g.InvoicePrefix != p {
				t.Fatalf("read back %q, want %q", g.InvoicePrefix, p)
			}
		}
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		if want := fmt.Sprintf("123-INV-%d-0001", year); *inv.Number != want {
			t.Fatalf("number %s, want %s", *inv.Number, want)
		}
	})

	harness.Rule(t, "D15", "settings: a prefix that is not 3 to 12 upper-case letters or digits is 400 invoice_prefix_invalid", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		for _, p := range []string{"", "AB", "ABCDEFGHIJKLM", "shop", "Shop", "SH-P", "SH P", " ABC", "ABC ", "SHÖP", "ＡＢＣ", "ABC\n"} {
			r, err := o.Client.UpdateSettingsWithResponse(ctx, nil, dash.SettingsUpdate{InvoicePrefix: p})
			if err != nil {
				t.Fatal(err)
			}
			wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, 400, "invalid_request", "invoice_prefix_invalid", "invoice_prefix")
		}
		missing := ownerRaw(t, o, http.MethodPost, "/api/v1/settings", `{}`, nil)
		if missing.Status != 400 || !strings.Contains(string(missing.Body), "invoice_prefix") {
			t.Fatalf("missing prefix: %d %s", missing.Status, missing.Body)
		}
		if s := getSettings(t, o); s.InvoicePrefix != "DASH" || s.Updated != nil {
			t.Fatalf("a refused prefix changed the settings: %+v", s)
		}
	})

	harness.Rule(t, "D15", "settings: numbers after a prefix change keep their sequence per year", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		first := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		second := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		if s := setPrefix(t, o, "NEWP"); s.NextInvoiceNumber != fmt.Sprintf("NEWP-INV-%d-0003", year) {
			t.Fatalf("next number %s", s.NextInvoiceNumber)
		}
		third := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		want := []string{fmt.Sprintf("DASH-INV-%d-0001", year), fmt.Sprintf("DASH-INV-%d-0002", year), fmt.Sprintf("NEWP-INV-%d-0003", year)}
		if *first.Number != want[0] || *second.Number != want[1] || *third.Number != want[2] {
			t.Fatalf("numbers %s %s %s, want %v", *first.Number, *second.Number, *third.Number, want)
		}
		// Invoices sent before the change keep their numbers.
		g, _ := o.Client.GetInvoiceWithResponse(ctx, dashTest, first.Id)
		if g.JSON200 == nil || *g.JSON200.Number != want[0] {
			t.Fatalf("first invoice after the change: %s", g.Body)
		}
		// Back to the default: the count still goes on.
		setPrefix(t, o, "DASH")
		fourth := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		if w := fmt.Sprintf("DASH-INV-%d-0004", year); *fourth.Number != w {
			t.Fatalf("fourth %s, want %s", *fourth.Number, w)
		}
	})

	harness.Rule(t, "D15", "settings: the prefix is the merchant's own, the same in both environments", func(t *testing.T) {
		t.Parallel()
		a, b := newDashOwner(t), newDashOwner(t)
		setPrefix(t, a, "AAAA")
		if s := getSettings(t, b); s.InvoicePrefix != "DASH" {
			t.Fatalf("another merchant's prefix leaked: %+v", s)
		}
		r, err := b.Client.CreateInvoiceWithResponse(ctx, dashLive, nil, dash.DashboardInvoiceCreate{Currency: ptr("eur"),
			CustomerName: ptr("Ada"), CustomerEmail: ptr("ada@example.com"), LineItems: &[]dash.DashboardInvoiceLine{freeLine("Work", 1, 1000, "0")}})
		if err != nil || r.JSON201 == nil {
			t.Fatalf("live draft: %v %s", err, r.Body)
		}
		setPrefix(t, b, "BLIVE")
		s, err := b.Client.SendInvoiceWithResponse(ctx, dashLive, r.JSON201.Id, nil)
		if err != nil || s.JSON200 == nil || *s.JSON200.Number != fmt.Sprintf("BLIVE-INV-%d-0001", year) {
			t.Fatalf("live send: %v %s", err, s.Body)
		}
	})

	harness.Rule(t, "D15", "settings: POST is idempotent: a replay answers the same, another body is 409", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		key := map[string]string{"Idempotency-Key": "set-" + core62()}
		first := ownerRaw(t, o, http.MethodPost, "/api/v1/settings", `{"invoice_prefix":"IDEM"}`, key)
		second := ownerRaw(t, o, http.MethodPost, "/api/v1/settings", `{"invoice_prefix":"IDEM"}`, key)
		if first.Status != 200 || second.Status != 200 || string(first.Body) != string(second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %d %s", first.Status, second.Status, second.Body)
		}
		other := ownerRaw(t, o, http.MethodPost, "/api/v1/settings", `{"invoice_prefix":"OTHER"}`, key)
		wantError(t, other.Status, other.Header, other.Body, 409, "idempotency_error", "idempotency_key_reused", "")
	})
}
