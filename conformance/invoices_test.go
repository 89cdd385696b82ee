package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

func TestInvoices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "D15", "VAT per line is round half-up(quantity × unit_amount × rate / 100), summed into the totals", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		inv := newDraft(t, o, freeLine("Consulting", 3, 333, "19"), freeLine("Stamp", 1, 50, "7"), freeLine("Book", 1, 50, "7"))
		// 999 × 19% = 189.81 → 190; 50 × 7% = 3.5 → 4, twice.
		if inv.Subtotal != 1099 || inv.VatAmount != 198 || inv.TotalAmount != 1297 || inv.AmountDue != 1297 {
			t.Fatalf("totals %d %d %d %d", inv.Subtotal, inv.VatAmount, inv.TotalAmount, inv.AmountDue)
		}
		if inv.LineItems[0].VatAmount != 190 || inv.LineItems[1].VatAmount != 4 || inv.LineItems[0].VatRate != "19" {
			t.Fatalf("lines %+v", inv.LineItems)
		}
		if inv.Status != "draft" || inv.Number != nil || inv.PublicToken != nil || inv.HostedInvoiceUrl != nil || inv.DaysUntilDue != 30 {
			t.Fatalf("draft %+v", inv)
		}
	})

	harness.Rule(t, "D15", "every validation error names its param", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		recurring := createDashPrice(t, o, true)
		oneTime := createDashPrice(t, o, false)
		archived := createDashPrice(t, o, false)
		if r, _ := o.Client.ArchivePriceWithResponse(ctx, dashTest, archived); r == nil || r.StatusCode() != 200 {
			t.Fatal("archive price")
		}
		usd := createDashPriceIn(t, o, "usd")
		good := func() dash.DashboardInvoiceCreate {
			ls := []dash.DashboardInvoiceLine{freeLine("Work", 1, 1000, "19")}
			return dash.DashboardInvoiceCreate{Currency: ptr("eur"), CustomerName: ptr("Ada"), CustomerEmail: ptr("ada@example.com"), LineItems: &ls}
		}
		line := func(l dash.DashboardInvoiceLine) func(*dash.DashboardInvoiceCreate) {
			return func(b *dash.DashboardInvoiceCreate) { b.LineItems = &[]dash.DashboardInvoiceLine{l} }
		}
		cases := []struct {
			name             string
			mod              func(*dash.DashboardInvoiceCreate)
			status           int
			typ, code, param string
		}{
			{"customer_name missing", func(b *dash.DashboardInvoiceCreate) { b.CustomerName = nil }, 400, "invalid_request", "parameter_missing", "customer_name"},
			{"customer_name too short", func(b *dash.DashboardInvoiceCreate) { b.CustomerName = ptr("A") }, 400, "invalid_request", "customer_name_invalid", "customer_name"},
			{"customer_email missing", func(b *dash.DashboardInvoiceCreate) { b.CustomerEmail = nil }, 400, "invalid_request", "parameter_missing", "customer_email"},
			{"customer_email invalid", func(b *dash.DashboardInvoiceCreate) { b.CustomerEmail = ptr("nope") }, 400, "invalid_request", "customer_email_invalid", "customer_email"},
			{"currency missing", func(b *dash.DashboardInvoiceCreate) { b.Currency = nil }, 400, "invalid_request", "parameter_missing", "currency"},
			{"days_until_due above 365", func(b *dash.DashboardInvoiceCreate) { b.DaysUntilDue = ptr(366) }, 400, "invalid_request", "days_until_due_invalid", "days_until_due"},
			{"days_until_due negative", func(b *dash.DashboardInvoiceCreate) { b.DaysUntilDue = ptr(-1) }, 400, "invalid_request", "days_until_due_invalid", "days_until_due"},
			{"quantity 0", line(freeLine("Work", 0, 1000, "19")), 400, "invalid_request", "quantity_invalid", "line_items.0.quantity"},
			{"quantity 10001", line(freeLine("Work", 10001, 1000, "19")), 400, "invalid_request", "quantity_invalid", "line_items.0.quantity"},
			{"vat_rate with 3 decimals", line(freeLine("Work", 1, 1000, "7.125")), 400, "invalid_request", "vat_rate_invalid", "line_items.0.vat_rate"},
			{"vat_rate above 100", line(freeLine("Work", 1, 1000, "100.5")), 400, "invalid_request", "vat_rate_invalid", "line_items.0.vat_rate"},
			{"vat_rate negative", line(freeLine("Work", 1, 1000, "-1")), 400, "invalid_request", "vat_rate_invalid", "line_items.0.vat_rate"},
			{"unit_amount negative", line(freeLine("Work", 1, -5, "0")), 400, "invalid_request", "unit_amount_invalid", "line_items.0.unit_amount"},
			{"description missing", line(dash.DashboardInvoiceLine{UnitAmount: ptr(int64(100))}), 400, "invalid_request", "parameter_missing", "line_items.0.description"},
			{"unit_amount missing", line(dash.DashboardInvoiceLine{Description: ptr("x")}), 400, "invalid_request", "parameter_missing", "line_items.0.unit_amount"},
			{"recurring price", line(dash.DashboardInvoiceLine{PriceId: &recurring}), 400, "invalid_request", "price_recurring", "line_items.0.price_id"},
			{"archived price", line(dash.DashboardInvoiceLine{PriceId: &archived}), 400, "invalid_request", "price_inactive", "line_items.0.price_id"},
			{"unknown price", line(dash.DashboardInvoiceLine{PriceId: ptr("price_000000000000000000000000")}), 404, "not_found", "price_not_found", "line_items.0.price_id"},
			{"catalog line in another currency", line(dash.DashboardInvoiceLine{PriceId: &usd}), 400, "invalid_request", "currency_mismatch", "currency"},
			{"catalog line with its own unit_amount", line(dash.DashboardInvoiceLine{PriceId: &oneTime, UnitAmount: ptr(int64(1))}), 400, "invalid_request", "line_item_locked", "line_items.0.unit_amount"},
			{"total above the maximum", line(freeLine("Work", 10000, 99_999_999, "0")), 400, "amount_too_large", "amount_above_maximum", "line_items"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				b := good()
				c.mod(&b)
				r, err := o.Client.CreateInvoiceWithResponse(ctx, dashTest, nil, b)
				if err != nil {
					t.Fatal(err)
				}
				wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, c.status, c.typ, c.code, c.param)
			})
		}
	})

	harness.Rule(t, "D15", "a catalog line is locked to its price and fixes the invoice currency", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		price := createDashPriceIn(t, o, "usd")
		ls := []dash.DashboardInvoiceLine{{PriceId: &price, Quantity: ptr(int64(2)), VatRate: ptr("10")}, freeLine("Setup", 1, 500, "0")}
		r, err := o.Client.CreateInvoiceWithResponse(ctx, dashTest, nil, dash.DashboardInvoiceCreate{CustomerName: ptr("Ada"),
			CustomerEmail: ptr("ada@example.com"), LineItems: &ls})
		if err != nil {
			t.Fatal(err)
		}
		inv := r.JSON201
		if inv == nil || inv.Currency != "USD" || !inv.LineItems[0].Locked || inv.LineItems[0].UnitAmount != 1500 ||
			inv.LineItems[0].PriceId == nil || *inv.LineItems[0].PriceId != price || inv.LineItems[1].Locked || inv.TotalAmount != 3000+300+500 {
			t.Fatalf("create: %d %s", r.StatusCode(), r.Body)
		}
		// Archiving the price keeps the line it locked, given again as it was.
		if ar, _ := o.Client.ArchivePriceWithResponse(ctx, dashTest, price); ar == nil || ar.StatusCode() != 200 {
			t.Fatal("archive")
		}
		up, err := o.Client.UpdateInvoiceWithResponse(ctx, dashTest, inv.Id, nil, dash.DashboardInvoiceUpdate{LineItems: &ls, Memo: ptr("Thanks")})
		if err != nil {
			t.Fatal(err)
		}
		if up.JSON200 == nil || up.JSON200.TotalAmount != 3800 || up.JSON200.Memo == nil || *up.JSON200.Memo != "Thanks" {
			t.Fatalf("update: %d %s", up.StatusCode(), up.Body)
		}
		// Changing the currency under a catalog line is refused.
		bad, _ := o.Client.UpdateInvoiceWithResponse(ctx, dashTest, inv.Id, nil, dash.DashboardInvoiceUpdate{Currency: ptr("eur")})
		wantError(t, bad.StatusCode(), bad.HTTPResponse.Header, bad.Body, 400, "invalid_request", "currency_mismatch", "currency")
	})

	harness.Rule(t, "D15", "send: number, token, dates, invoice.finalized and the e-mail with the hosted link", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		d := newDraft(t, o, freeLine("Work", 2, 1000, "19"))
		inv := sendInvoice(t, o, d.Id)
		year := time.Now().UTC().Year()
		want := regexp.MustCompile(fmt.Sprintf(`^DASH-INV-%d-0001$`, year))
		if inv.Status != "open" || inv.Number == nil || !want.MatchString(*inv.Number) {
			t.Fatalf("sent: %+v", inv)
		}
		if inv.PublicToken == nil || len(*inv.PublicToken) < 32 || inv.HostedInvoiceUrl == nil ||
			*inv.HostedInvoiceUrl != strings.TrimRight(target.CheckoutURL, "/")+"/i/"+*inv.PublicToken {
			t.Fatalf("token/link: %+v", inv)
		}
		if inv.IssueDate == nil || inv.DueDate == nil || *inv.DueDate-*inv.IssueDate != 30*86400 {
			t.Fatalf("dates %v %v", inv.IssueDate, inv.DueDate)
		}
		if got := invoiceEvents(t, o.Test, inv.Id); !slices.Equal(got, []string{"invoice.finalized"}) {
			t.Fatalf("events %v", got)
		}
		// The second one of the year takes the next number.
		next := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 300, "0")).Id)
		if !strings.HasSuffix(*next.Number, "-0002") {
			t.Fatalf("second number %s", *next.Number)
		}
		// The customer's e-mail carries the link, in HTML and plain text.
		deadline := time.Now().Add(20 * time.Second)
		for {
			mb, err := o.Client.ListMailboxWithResponse(ctx, nil)
			if err != nil || mb.JSON200 == nil {
				t.Fatalf("mailbox: %v", err)
			}
			var found *dash.MailboxMessage
			for i, m := range mb.JSON200.Data {
				if m.To == d.CustomerEmail && strings.Contains(m.Subject, *inv.Number) {
					found = &mb.JSON200.Data[i]
				}
			}
			if found != nil {
				if !strings.Contains(found.Text, *inv.HostedInvoiceUrl) || !strings.Contains(found.Html, *inv.HostedInvoiceUrl) ||
					!strings.Contains(found.Text, "23.80 EUR") {
					t.Fatalf("mail %+v", found)
				}
				// The invoice's PDF is attached: the mailbox lists it and serves its bytes.
				if len(found.Attachments) != 1 {
					t.Fatalf("attachments %+v, want the PDF", found.Attachments)
				}
				f := found.Attachments[0]
				if f.Filename != *inv.Number+".pdf" || f.ContentType != "application/pdf" || f.Index != 0 || f.Size < 1000 ||
					f.Url != "/api/v1/test/mailbox/"+found.Id+"/attachments/0" {
					t.Fatalf("attachment %+v", f)
				}
				file, err := o.Client.GetMailboxAttachmentWithResponse(ctx, found.Id, 0)
				if err != nil || file.StatusCode() != 200 || !bytes.HasPrefix(file.Body, []byte("%PDF-")) ||
					int64(len(file.Body)) != f.Size || !strings.Contains(file.HTTPResponse.Header.Get("Content-Disposition"), *inv.Number+".pdf") {
					t.Fatalf("attachment download: %v %d %d bytes", err, file.StatusCode(), len(file.Body))
				}
				gone, _ := o.Client.GetMailboxAttachmentWithResponse(ctx, found.Id, 1)
				wantError(t, gone.StatusCode(), gone.HTTPResponse.Header, gone.Body, 404, "not_found", "mailbox_attachment_not_found", "id")
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no invoice e-mail within 20 s")
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	harness.Rule(t, "D15", "send below 250 is 400 amount_below_minimum and consumes no number", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		low := newDraft(t, o, freeLine("Small", 1, 209, "19")) // 209 + 40 = 249
		r, _ := o.Client.SendInvoiceWithResponse(ctx, dashTest, low.Id, nil)
		wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, 400, "amount_too_small", "amount_below_minimum", "total_amount")
		ok := sendInvoice(t, o, newDraft(t, o, freeLine("Exact", 1, 210, "19")).Id) // 210 + 40 = 250
		if !strings.HasSuffix(*ok.Number, "-0001") {
			t.Fatalf("number %s: the refused send took one", *ok.Number)
		}
	})

	harness.Rule(t, "D15", "every transition and its events; any other move is 422 invoice_not_<state>", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		d := newDraft(t, o, freeLine("Work", 1, 1000, "0"))
		v, _ := o.Client.VoidInvoiceWithResponse(ctx, dashTest, d.Id, nil)
		wantError(t, v.StatusCode(), v.HTTPResponse.Header, v.Body, 422, "invalid_state", "invoice_not_open", "")
		m, _ := o.Client.MarkInvoiceUncollectibleWithResponse(ctx, dashTest, d.Id, nil)
		wantError(t, m.StatusCode(), m.HTTPResponse.Header, m.Body, 422, "invalid_state", "invoice_not_open", "")
		inv := sendInvoice(t, o, d.Id)
		s2, _ := o.Client.SendInvoiceWithResponse(ctx, dashTest, inv.Id, nil)
		wantError(t, s2.StatusCode(), s2.HTTPResponse.Header, s2.Body, 422, "invalid_state", "invoice_not_draft", "")
		u, _ := o.Client.UpdateInvoiceWithResponse(ctx, dashTest, inv.Id, nil, dash.DashboardInvoiceUpdate{Memo: ptr("x")})
		wantError(t, u.StatusCode(), u.HTTPResponse.Header, u.Body, 422, "invalid_state", "invoice_not_draft", "")
		del, _ := o.Client.DeleteInvoiceWithResponse(ctx, dashTest, inv.Id)
		wantError(t, del.StatusCode(), del.HTTPResponse.Header, del.Body, 422, "invalid_state", "invoice_not_draft", "")
		mu, _ := o.Client.MarkInvoiceUncollectibleWithResponse(ctx, dashTest, inv.Id, nil)
		if mu.JSON200 == nil || mu.JSON200.Status != "uncollectible" || mu.JSON200.AmountDue != 1000 {
			t.Fatalf("mark: %d %s", mu.StatusCode(), mu.Body)
		}
		mu2, _ := o.Client.MarkInvoiceUncollectibleWithResponse(ctx, dashTest, inv.Id, nil)
		wantError(t, mu2.StatusCode(), mu2.HTTPResponse.Header, mu2.Body, 422, "invalid_state", "invoice_not_open", "")
		vo, _ := o.Client.VoidInvoiceWithResponse(ctx, dashTest, inv.Id, nil)
		if vo.JSON200 == nil || vo.JSON200.Status != "void" || vo.JSON200.AmountDue != 0 {
			t.Fatalf("void: %d %s", vo.StatusCode(), vo.Body)
		}
		vo2, _ := o.Client.VoidInvoiceWithResponse(ctx, dashTest, inv.Id, nil)
		wantError(t, vo2.StatusCode(), vo2.HTTPResponse.Header, vo2.Body, 422, "invalid_state", "invoice_not_open", "")
		if got := invoiceEvents(t, o.Test, inv.Id); !slices.Equal(got, []string{"invoice.finalized", "invoice.marked_uncollectible", "invoice.voided"}) {
			t.Fatalf("events %v", got)
		}
		// A void invoice takes no payment on its page.
		code, body, _ := hostedPost(t, "/i/"+*inv.PublicToken+"/pay", cardForm(payCardOK))
		if code != 422 || !strings.Contains(body, "This invoice was voided") || strings.Contains(body, "card_number") {
			t.Fatalf("pay void: %d", code)
		}
		// A draft is deleted.
		d2 := newDraft(t, o, freeLine("Work", 1, 1000, "0"))
		dr, _ := o.Client.DeleteInvoiceWithResponse(ctx, dashTest, d2.Id)
		if dr.JSON200 == nil {
			t.Fatalf("delete draft: %d %s", dr.StatusCode(), dr.Body)
		}
		g, _ := o.Client.GetInvoiceWithResponse(ctx, dashTest, d2.Id)
		wantError(t, g.StatusCode(), g.HTTPResponse.Header, g.Body, 404, "not_found", "invoice_not_found", "id")
	})

	harness.Rule(t, "D15", "paying on the hosted page: a decline is invoice.payment_failed, success a Payment with invoice_id, fee, receipt and invoice.paid", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 2, 1000, "19")).Id)
		page := "/i/" + *inv.PublicToken
		code, body := hostedGet(t, page)
		if code != 200 || !strings.Contains(body, *inv.Number) || !strings.Contains(body, "23.80") || !strings.Contains(body, "3.80") {
			t.Fatalf("page: %d", code)
		}
		code, body, _ = hostedPost(t, page+"/pay", cardForm(payCardDecline))
		if code != http.StatusPaymentRequired || !strings.Contains(body, "declined") {
			t.Fatalf("decline: %d", code)
		}
		code, _, h := hostedPost(t, page+"/pay", cardForm(payCardOK))
		if code != http.StatusSeeOther || h.Get("Location") != page {
			t.Fatalf("pay: %d %v", code, h)
		}
		g, _ := o.Client.GetInvoiceWithResponse(ctx, dashTest, inv.Id)
		if g.JSON200 == nil || g.JSON200.Status != "paid" || g.JSON200.AmountPaid != 2380 || g.JSON200.AmountDue != 0 || g.JSON200.PaymentId == nil ||
			g.JSON200.AttemptCount != 2 {
			t.Fatalf("paid: %d %s", g.StatusCode(), g.Body)
		}
		pay, err := o.Client.GetPaymentWithResponse(ctx, dashTest, *g.JSON200.PaymentId)
		if err != nil || pay.JSON200 == nil {
			t.Fatalf("payment: %v", err)
		}
		p := pay.JSON200.Payment
		if p.InvoiceId == nil || *p.InvoiceId != inv.Id || p.SessionId != nil || p.Amount != 2380 || p.Status != "succeeded" ||
			pay.JSON200.FeeBreakdown == nil || p.Fee.ServiceFeeChargeCurrency <= 0 {
			t.Fatalf("payment %s", pay.Body)
		}
		if got := invoiceEvents(t, o.Test, inv.Id); !slices.Equal(got, []string{"invoice.finalized", "payment_intent.payment_failed",
			"invoice.payment_failed", "payment_intent.succeeded", "invoice.paid"}) {
			t.Fatalf("events %v", got)
		}
		code, body = hostedGet(t, page)
		if code != 200 || !strings.Contains(body, "paid on") || strings.Contains(body, "card_number") {
			t.Fatalf("paid page: %d", code)
		}
		code, _, _ = hostedPost(t, page+"/pay", cardForm(payCardOK))
		if code != 422 {
			t.Fatalf("pay twice: %d", code)
		}
	})

	harness.Rule(t, "D15", "gap-free numbering under 20 concurrent sends: no number shared or skipped", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		const n = 20
		ids := make([]string, n)
		for i := range ids {
			ids[i] = newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id
		}
		nums := make([]string, n)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := o.Client.SendInvoiceWithResponse(ctx, dashTest, ids[i], nil)
				if err == nil && r.JSON200 != nil && r.JSON200.Number != nil {
					nums[i] = *r.JSON200.Number
				}
			}()
		}
		wg.Wait()
		want := make([]string, n)
		for i := range want {
			want[i] = fmt.Sprintf("DASH-INV-%d-%04d", time.Now().UTC().Year(), i+1)
		}
		slices.Sort(nums)
		if !slices.Equal(nums, want) {
			t.Fatalf("numbers %v", nums)
		}
	})

	harness.Rule(t, "D15", "an invoice of another merchant or environment is 404", func(t *testing.T) {
		t.Parallel()
		o, other := newDashOwner(t), newDashOwner(t)
		inv := newDraft(t, o, freeLine("Work", 1, 1000, "0"))
		g, _ := other.Client.GetInvoiceWithResponse(ctx, dashTest, inv.Id)
		wantError(t, g.StatusCode(), g.HTTPResponse.Header, g.Body, 404, "not_found", "invoice_not_found", "id")
		s, _ := other.Client.SendInvoiceWithResponse(ctx, dashTest, inv.Id, nil)
		wantError(t, s.StatusCode(), s.HTTPResponse.Header, s.Body, 404, "not_found", "invoice_not_found", "id")
		live, _ := o.Client.GetInvoiceWithResponse(ctx, dash.Env("live"), inv.Id)
		wantError(t, live.StatusCode(), live.HTTPResponse.Header, live.Body, 404, "not_found", "invoice_not_found", "id")
		ls, _ := other.Client.ListInvoicesWithResponse(ctx, dashTest, nil)
		if ls.JSON200 == nil || len(ls.JSON200.Data) != 0 {
			t.Fatalf("other's list: %s", ls.Body)
		}
		code, _ := hostedGet(t, "/i/"+strings.Repeat("x", 40))
		if code != 404 {
			t.Fatalf("unknown token: %d", code)
		}
	})

	harness.Rule(t, "D15", "the list filters by status, newest first", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		a := newDraft(t, o, freeLine("A", 1, 1000, "0"))
		b := sendInvoice(t, o, newDraft(t, o, freeLine("B", 1, 1000, "0")).Id)
		all, _ := o.Client.ListInvoicesWithResponse(ctx, dashTest, nil)
		if all.JSON200 == nil || len(all.JSON200.Data) != 2 || all.JSON200.Data[0].Id != b.Id || all.JSON200.Data[1].Id != a.Id {
			t.Fatalf("all: %s", all.Body)
		}
		st := dash.ListInvoicesParamsStatus("draft")
		drafts, _ := o.Client.ListInvoicesWithResponse(ctx, dashTest, &dash.ListInvoicesParams{Status: &st})
		if drafts.JSON200 == nil || len(drafts.JSON200.Data) != 1 || drafts.JSON200.Data[0].Id != a.Id {
			t.Fatalf("drafts: %s", drafts.Body)
		}
		r := ownerRaw(t, o, http.MethodGet, "/api/v1/test/invoices?status=late", "", nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "status_invalid", "status")
	})

	harness.Rule(t, "D15", "the POSTs are idempotent: a replay returns the same invoice, another body is 409", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		body := `{"currency":"eur","customer_name":"Ada","customer_email":"ada@example.com","line_items":[{"description":"Work","unit_amount":1000}]}`
		key := map[string]string{"Idempotency-Key": "inv-" + core62()}
		first := ownerRaw(t, o, http.MethodPost, "/api/v1/test/invoices", body, key)
		second := ownerRaw(t, o, http.MethodPost, "/api/v1/test/invoices", body, key)
		if first.Status != 201 || second.Status != 201 || string(first.Body) != string(second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %d %s", first.Status, second.Status, second.Body)
		}
		other := ownerRaw(t, o, http.MethodPost, "/api/v1/test/invoices", strings.Replace(body, "1000", "2000", 1), key)
		wantError(t, other.Status, other.Header, other.Body, 409, "idempotency_error", "idempotency_key_reused", "")
		ls, _ := o.Client.ListInvoicesWithResponse(ctx, dashTest, nil)
		if ls.JSON200 == nil || len(ls.JSON200.Data) != 1 {
			t.Fatalf("one invoice: %s", ls.Body)
		}
		id := ls.JSON200.Data[0].Id
		skey := map[string]string{"Idempotency-Key": "send-" + core62()}
		s1 := ownerRaw(t, o, http.MethodPost, "/api/v1/test/invoices/"+id+"/send", "", skey)
		s2 := ownerRaw(t, o, http.MethodPost, "/api/v1/test/invoices/"+id+"/send", "", skey)
		if s1.Status != 200 || s2.Status != 200 || string(s1.Body) != string(s2.Body) {
			t.Fatalf("send replay: %d %d %s", s1.Status, s2.Status, s2.Body)
		}
		if got := invoiceEvents(t, o.Test, id); !slices.Equal(got, []string{"invoice.finalized"}) {
			t.Fatalf("one finalisation: %v", got)
		}
	})
}

func TestInvoiceBrowserAPI(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D15", "browser API: GET and POST …/confirm of an invoice by its token, with the session confirm's rules", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "19")).Id)
		base := "/api/v1/invoices/" + *inv.PublicToken
		g := rawAt(t, target.CheckoutURL, http.MethodGet, base, "", "", nil)
		if g.Status != 200 || !strings.Contains(string(g.Body), `"number":"`+*inv.Number+`"`) || !strings.Contains(string(g.Body), `"amount_due":1190`) {
			t.Fatalf("get: %d %s", g.Status, g.Body)
		}
		card := func(n string) string {
			return `{"payment_method":"card","card":{"number":"` + n + `","exp_month":12,"exp_year":2034,"cvc":"123"}}`
		}
		bad := rawAt(t, target.CheckoutURL, http.MethodPost, base+"/confirm", "", `{"payment_method":"card","card":{"number":"4242424242424241","exp_month":12,"exp_year":2034,"cvc":"123"}}`, nil)
		wantError(t, bad.Status, bad.Header, bad.Body, 400, "invalid_request", "number_invalid", "card.number")
		dec := rawAt(t, target.CheckoutURL, http.MethodPost, base+"/confirm", "", card(payCardDecline), nil)
		wantError(t, dec.Status, dec.Header, dec.Body, 402, "card_error", "card_declined", "")
		ok := rawAt(t, target.CheckoutURL, http.MethodPost, base+"/confirm", "", card(payCardOK), nil)
		if ok.Status != 200 || !strings.Contains(string(ok.Body), `"status":"succeeded"`) || !strings.Contains(string(ok.Body), `"status":"paid"`) {
			t.Fatalf("confirm: %d %s", ok.Status, ok.Body)
		}
		again := rawAt(t, target.CheckoutURL, http.MethodPost, base+"/confirm", "", card(payCardOK), nil)
		wantError(t, again.Status, again.Header, again.Body, 422, "invalid_state", "invoice_not_open", "")
		missing := rawAt(t, target.CheckoutURL, http.MethodGet, "/api/v1/invoices/"+strings.Repeat("Z", 40), "", "", nil)
		wantError(t, missing.Status, missing.Header, missing.Body, 404, "not_found", "invoice_not_found", "")
	})
}

func TestInvoicePDF(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D15", "the PDF: from the hosted link and from the dashboard, not from another merchant", func(t *testing.T) {
		t.Parallel()
		o, other := newDashOwner(t), newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Beratung für Müller", 2, 1000, "19")).Id)
		resp, err := http.Get(target.CheckoutURL + "/i/" + *inv.PublicToken + "/pdf") //nolint:noctx // a test
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 5)
		_, _ = resp.Body.Read(b)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || string(b) != "%PDF-" ||
			!strings.Contains(resp.Header.Get("Content-Disposition"), *inv.Number+".pdf") {
			t.Fatalf("hosted pdf: %d %v %q", resp.StatusCode, resp.Header, b)
		}
		d := ownerRaw(t, o, http.MethodGet, "/api/v1/test/invoices/"+inv.Id+"/pdf", "", nil)
		if d.Status != 200 || !strings.HasPrefix(string(d.Body), "%PDF-") {
			t.Fatalf("dashboard pdf: %d", d.Status)
		}
		x := ownerRaw(t, other, http.MethodGet, "/api/v1/test/invoices/"+inv.Id+"/pdf", "", nil)
		wantError(t, x.Status, x.Header, x.Body, 404, "not_found", "invoice_not_found", "id")
		if code, _ := hostedGet(t, "/i/"+strings.Repeat("q", 40)+"/pdf"); code != 404 {
			t.Fatalf("unknown token pdf: %d", code)
		}
	})
}

func TestInvoiceHostedMethods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	harness.Rule(t, "D15", "hosted page: a 3-D Secure card is challenged, and completing the challenge pays the invoice", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		page := "/i/" + *inv.PublicToken
		code, _, h := hostedPost(t, page+"/pay", cardForm(payCard3DS))
		if code != http.StatusSeeOther || h.Get("Location") != page+"?step=3ds" {
			t.Fatalf("3ds: %d %v", code, h)
		}
		code, body := hostedGet(t, page+"?step=3ds")
		if code != 200 || !strings.Contains(body, "challenge-complete") || strings.Contains(body, "card_number") {
			t.Fatalf("challenge page: %d", code)
		}
		code, _, h = hostedPost(t, page+"/3ds", url.Values{"action": {"complete"}})
		if code != http.StatusSeeOther || h.Get("Location") != page {
			t.Fatalf("complete: %d %v", code, h)
		}
		g, _ := o.Client.GetInvoiceWithResponse(ctx, dashTest, inv.Id)
		if g.JSON200 == nil || g.JSON200.Status != "paid" {
			t.Fatalf("after 3-D Secure: %s", g.Body)
		}
	})
	harness.Rule(t, "D15", "hosted page: a SEPA debit keeps the invoice open while processing, and its settlement pays it", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		inv := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		page := "/i/" + *inv.PublicToken
		code, _, _ := hostedPost(t, page+"/pay", url.Values{"method": {"sepa_debit"}, "iban": {payIBANOK}, "account_holder": {"Ada Lovelace"}})
		if code != http.StatusSeeOther {
			t.Fatalf("sepa: %d", code)
		}
		code, body := hostedGet(t, page)
		if code != 200 || !strings.Contains(body, "processing") || strings.Contains(body, "card_number") {
			t.Fatalf("processing page: %d", code)
		}
		void, _ := o.Client.VoidInvoiceWithResponse(ctx, dashTest, inv.Id, nil)
		wantError(t, void.StatusCode(), void.HTTPResponse.Header, void.Body, 422, "invalid_state", "invoice_payment_in_progress", "")
		clockAdvance(t, o.Test, 600) // the sandbox settles a SEPA debit two minutes after it was confirmed
		g, _ := o.Client.GetInvoiceWithResponse(ctx, dashTest, inv.Id)
		if g.JSON200 == nil || g.JSON200.Status != "paid" || g.JSON200.AmountPaid != 1000 {
			t.Fatalf("after settlement: %s", g.Body)
		}
		got := invoiceEvents(t, o.Test, inv.Id)
		if len(got) == 0 || got[0] != "invoice.finalized" || got[len(got)-1] != "invoice.paid" ||
			!slices.Contains(got, "payment_intent.succeeded") || slices.Contains(got, "invoice.payment_failed") {
			t.Fatalf("events %v", got)
		}
	})
}

func TestInvoiceNumberYear(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D15", "the number's year is the environment clock's at sending, and each year starts at 0001", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		first := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		c := clockAdvance(t, o.Test, 366*86400)
		year := time.Unix(c.Now, 0).UTC().Year()
		next := sendInvoice(t, o, newDraft(t, o, freeLine("Work", 1, 1000, "0")).Id)
		if want := fmt.Sprintf("DASH-INV-%d-0001", year); *next.Number != want || *first.Number == want {
			t.Fatalf("numbers %s then %s, want %s", *first.Number, *next.Number, want)
		}
		if *next.IssueDate != c.Now {
			t.Fatalf("issue date %d, clock %d", *next.IssueDate, c.Now)
		}
	})
}
