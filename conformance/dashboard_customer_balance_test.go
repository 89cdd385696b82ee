package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// cbAdjust adjusts the customer's balance through the dashboard API, with key as the
// Idempotency-Key when not empty.
func cbAdjust(t *testing.T, o *DashOwner, customer string, body dash.CustomerBalanceAdjustment, key string) *dash.CreateCustomerBalanceTransactionResponse {
	t.Helper()
	p := &dash.CreateCustomerBalanceTransactionParams{}
	if key != "" {
		p.IdempotencyKey = &key
	}
	r, err := o.Client.CreateCustomerBalanceTransactionWithResponse(context.Background(), dashTest, customer, p, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cbList pages the customer's balance transactions.
func cbList(t *testing.T, o *DashOwner, env dash.DashboardEnvironment, customer string, p *dash.ListCustomerBalanceTransactionsParams) *dash.ListCustomerBalanceTransactionsResponse {
	t.Helper()
	r, err := o.Client.ListCustomerBalanceTransactionsWithResponse(context.Background(), env, customer, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cbRaw posts body as it is (not through the generated types) to the customer's balance
// transactions, signed in as o.
func cbRaw(t *testing.T, o *DashOwner, customer, body string) Raw {
	t.Helper()
	return dashRaw(t, http.MethodPost, "/api/v1/test/customers/"+customer+"/balance_transactions", o.sessionToken(t), body,
		map[string]string{"X-CSRF-Token": o.CSRF})
}

func TestDashboardCustomerBalance(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "DBILL", "a merchant adjusts a customer's balance by hand: a negative amount credits it, a positive one is owed, per currency; the answer has the balance after it and the customer shows the new balances", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		note := "Goodwill credit for the outage"
		r := cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: -500, Currency: "eur", Description: &note}, "")
		if r.JSON201 == nil {
			t.Fatalf("credit: %d %s", r.StatusCode(), r.Body)
		}
		c := r.JSON201
		if !strings.HasPrefix(c.Id, "cbtxn_") || c.Type != "adjustment" || c.Amount != -500 || c.Currency != "EUR" || c.Customer != s.Customer ||
			c.Description == nil || *c.Description != note || c.Invoice != nil || c.Subscription != nil || c.EndingBalance == nil || *c.EndingBalance != -500 {
			t.Fatalf("credit %s", r.Body)
		}
		r = cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: 1200, Currency: "EUR"}, "")
		if r.JSON201 == nil || r.JSON201.Description != nil || *r.JSON201.EndingBalance != 700 {
			t.Fatalf("debit: %d %s", r.StatusCode(), r.Body)
		}
		r = cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: -250, Currency: "USD"}, "")
		if r.JSON201 == nil || *r.JSON201.EndingBalance != -250 {
			t.Fatalf("USD credit: %d %s", r.StatusCode(), r.Body)
		}
		if b := balOf(t, o, s.Customer); len(b) != 2 || b["EUR"] != 700 || b["USD"] != -250 {
			t.Fatalf("balances %v, want EUR 700 and USD -250", b)
		}
	})

	harness.Rule(t, "DBILL", "a customer's balance transactions list newest first with D8 paging (limit, starting_after, ending_before; a cursor of another customer is 400)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		other := dbSub(t, o, "grace-"+strings.ToLower(o.ID[4:10])+"@example.com", 900, nil)
		var ids []string
		for i := 1; i <= 3; i++ {
			r := cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: int64(-100 * i), Currency: "EUR"}, "")
			if r.JSON201 == nil {
				t.Fatalf("adjust %d: %d %s", i, r.StatusCode(), r.Body)
			}
			ids = append(ids, r.JSON201.Id)
		}
		foreign := cbAdjust(t, o, other.Customer, dash.CustomerBalanceAdjustment{Amount: 100, Currency: "EUR"}, "").JSON201
		two := 2
		p := cbList(t, o, dashTest, s.Customer, &dash.ListCustomerBalanceTransactionsParams{Limit: &two})
		if p.JSON200 == nil || len(p.JSON200.Data) != 2 || !p.JSON200.HasMore || p.JSON200.Data[0].Id != ids[2] || p.JSON200.Data[1].Id != ids[1] ||
			p.JSON200.Url != "/api/v1/test/customers/"+s.Customer+"/balance_transactions" || p.JSON200.Data[0].EndingBalance != nil {
			t.Fatalf("first page: %d %s", p.StatusCode(), p.Body)
		}
		p = cbList(t, o, dashTest, s.Customer, &dash.ListCustomerBalanceTransactionsParams{Limit: &two, StartingAfter: &ids[1]})
		if p.JSON200 == nil || len(p.JSON200.Data) != 1 || p.JSON200.HasMore || p.JSON200.Data[0].Id != ids[0] {
			t.Fatalf("second page: %d %s", p.StatusCode(), p.Body)
		}
		p = cbList(t, o, dashTest, s.Customer, &dash.ListCustomerBalanceTransactionsParams{Limit: &two, EndingBefore: &ids[0]})
		if p.JSON200 == nil || len(p.JSON200.Data) != 2 || p.JSON200.Data[0].Id != ids[2] || p.JSON200.Data[1].Id != ids[1] {
			t.Fatalf("page before: %d %s", p.StatusCode(), p.Body)
		}
		p = cbList(t, o, dashTest, s.Customer, &dash.ListCustomerBalanceTransactionsParams{StartingAfter: &foreign.Id})
		wantErr(t, p, p.HTTPResponse, p.Body, 400, "invalid_request", "starting_after_invalid", "starting_after")
		zero := 0
		p = cbList(t, o, dashTest, s.Customer, &dash.ListCustomerBalanceTransactionsParams{Limit: &zero})
		wantErr(t, p, p.HTTPResponse, p.Body, 400, "invalid_request", "limit_invalid", "limit")
	})

	harness.Rule(t, "DBILL", "a balance adjustment refuses an amount of zero, fractional or beyond ±99,999,999 (amount), an unsupported or missing currency (currency), a description over 350 characters (description); nothing is written", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		for _, c := range []struct{ body, status, typ, code, param string }{
			{`{"amount":0,"currency":"EUR"}`, "400", "invalid_request", "amount_invalid", "amount"},
			{`{"amount":1.5,"currency":"EUR"}`, "400", "invalid_request", "amount_invalid", "amount"},
			{`{"amount":"100","currency":"EUR"}`, "400", "invalid_request", "amount_invalid", "amount"},
			{`{"amount":100000000,"currency":"EUR"}`, "400", "invalid_request", "amount_invalid", "amount"},
			{`{"amount":-100000000,"currency":"EUR"}`, "400", "invalid_request", "amount_invalid", "amount"},
			{`{"currency":"EUR"}`, "400", "invalid_request", "parameter_missing", "amount"},
			{`{"amount":100}`, "400", "invalid_request", "parameter_missing", "currency"},
			{`{"amount":100,"currency":"XXX"}`, "400", "currency_unsupported", "currency_unsupported", "currency"},
			{`{"amount":100,"currency":"EURO"}`, "400", "currency_unsupported", "currency_unsupported", "currency"},
			{`{"amount":100,"currency":"EUR","description":"` + strings.Repeat("é", 351) + `"}`, "400", "invalid_request", "description_invalid", "description"},
			{`{"amount":100,"currency":"EUR","reason":"adjustment"}`, "400", "invalid_request", "parameter_unknown", "reason"},
		} {
			r := cbRaw(t, o, s.Customer, c.body)
			wantError(t, r.Status, r.Header, r.Body, 400, c.typ, c.code, c.param)
		}
		ok := cbRaw(t, o, s.Customer, `{"amount":100,"currency":"EUR","description":"`+strings.Repeat("é", 350)+`"}`)
		if ok.Status != http.StatusCreated {
			t.Fatalf("350 characters: %d %s", ok.Status, ok.Body)
		}
		if b := balOf(t, o, s.Customer); len(b) != 1 || b["EUR"] != 100 {
			t.Fatalf("balances %v, want only the valid adjustment", b)
		}
	})

	harness.Rule(t, "DBILL", "another merchant's or the other environment's customer is not found (404 customer_not_found) by the balance list and the adjustment, and a POST without the CSRF token is 403", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		other := newDashOwner(t)
		r := cbAdjust(t, other, s.Customer, dash.CustomerBalanceAdjustment{Amount: -100, Currency: "EUR"}, "")
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "customer_not_found", "customer")
		l := cbList(t, other, dashTest, s.Customer, nil)
		wantErr(t, l, l.HTTPResponse, l.Body, 404, "not_found", "customer_not_found", "customer")
		l = cbList(t, o, dashLive, s.Customer, nil)
		wantErr(t, l, l.HTTPResponse, l.Body, 404, "not_found", "customer_not_found", "customer")
		live, err := o.Client.CreateCustomerBalanceTransactionWithResponse(context.Background(), dashLive, s.Customer, nil,
			dash.CustomerBalanceAdjustment{Amount: -100, Currency: "EUR"})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, live, live.HTTPResponse, live.Body, 404, "not_found", "customer_not_found", "customer")
		x, err := o.Client.CreateCustomerBalanceTransactionWithResponse(context.Background(), dashTest, s.Customer, nil,
			dash.CustomerBalanceAdjustment{Amount: -100, Currency: "EUR"}, csrfHeader(""))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, x, x.HTTPResponse, x.Body, 403, "permission_error", "csrf_token_invalid", "")
		if b := balOf(t, o, s.Customer); len(b) != 0 {
			t.Fatalf("a refused adjustment changed the balance: %v", b)
		}
	})

	harness.Rule(t, "DBILL", "a balance adjustment sent twice with one Idempotency-Key is made once and replayed; the key with another body is 409", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		key := "adjust-" + o.ID
		first := cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: -300, Currency: "EUR"}, key)
		again := cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: -300, Currency: "EUR"}, key)
		if first.JSON201 == nil || string(first.Body) != string(again.Body) || again.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d %s, again %d %s", first.StatusCode(), first.Body, again.StatusCode(), again.Body)
		}
		reused := cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: -400, Currency: "EUR"}, key)
		wantErr(t, reused, reused.HTTPResponse, reused.Body, 409, "idempotency_error", "idempotency_key_reused", "")
		if b := balOf(t, o, s.Customer); b["EUR"] != -300 {
			t.Fatalf("balance %v, want EUR -300 (one adjustment)", b)
		}
		if l := cbList(t, o, dashTest, s.Customer, nil); l.JSON200 == nil || len(l.JSON200.Data) != 1 {
			t.Fatalf("list: %d %s", l.StatusCode(), l.Body)
		}
	})

	harness.Rule(t, "DBILL", "concurrent adjustments of one customer are made one after another under its lock: ten at once leave ten distinct balances after them and the exact sum", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := dbSub(t, o, dbEmail(o), 900, nil)
		const n = 10
		endings := make(chan int64, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				r, err := o.Client.CreateCustomerBalanceTransactionWithResponse(context.Background(), dashTest, s.Customer, nil,
					dash.CustomerBalanceAdjustment{Amount: -100, Currency: "EUR"})
				if err != nil || r.JSON201 == nil || r.JSON201.EndingBalance == nil {
					t.Errorf("adjust: %v %s", err, r.Body)
					return
				}
				endings <- *r.JSON201.EndingBalance
			})
		}
		wg.Wait()
		close(endings)
		seen := map[int64]bool{}
		for e := range endings {
			seen[e] = true
		}
		for i := int64(1); i <= n; i++ {
			if !seen[-100*i] {
				t.Fatalf("balances after each %v, want each of -100 … -%d once", seen, 100*n)
			}
		}
		if b := balOf(t, o, s.Customer); b["EUR"] != -100*n {
			t.Fatalf("balance %v, want EUR %d", b, -100*n)
		}
	})

	harness.Rule(t, "DBILL", "the next renewal takes a hand-made credit like any other (starting_balance, ending_balance, a smaller charge) and lists it as applied_to_invoice (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := balWeekly(t, o, "grace@example.com", 1)
		r := cbAdjust(t, o, s.Customer, dash.CustomerBalanceAdjustment{Amount: -400, Currency: "EUR"}, "")
		if r.JSON201 == nil {
			t.Fatalf("adjust: %d %s", r.StatusCode(), r.Body)
		}
		// The weekly renewal of 1000 takes the 400 of credit and charges 600.
		_, id := balRenewed(t, o, s, 7*86400)
		inv := subInvoice(t, o, id)
		if inv.Status != "paid" || inv.TotalAmount != 1000 || inv.StartingBalance != -400 || inv.EndingBalance != 0 || inv.AmountPaid != 600 {
			t.Fatalf("renewal %+v", inv)
		}
		l := cbList(t, o, dashTest, s.Customer, nil)
		if l.JSON200 == nil || len(l.JSON200.Data) != 2 {
			t.Fatalf("list: %d %s", l.StatusCode(), l.Body)
		}
		applied := l.JSON200.Data[0]
		if applied.Type != "applied_to_invoice" || applied.Amount != 400 || applied.Invoice == nil || *applied.Invoice != id ||
			applied.Subscription == nil || *applied.Subscription != s.Id {
			t.Fatalf("applied %s", fmt.Sprint(applied))
		}
	})
}
