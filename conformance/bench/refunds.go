package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
)

// Refund throughput: partial refunds from the dashboard's JSON API
// (POST /api/v1/test/payments/{id}/refunds with an Idempotency-Key, as the payment page
// sends it), compared with the INSERT+event floor that create session is held to, in
// interleaved windows. A refund records itself pending, calls the sandbox processor outside
// any transaction, then applies the outcome (refund, payment's amount_refunded and status,
// fee reversal, events, the payer's e-mail) in one transaction.
//
// The payments are paid through the API before the timed part (create a session, confirm it
// with the sandbox's test card), refundPayments of them; each request refunds refundAmount of
// one of them. Worker w cycles through the payments w, w+conns, w+2·conns, …, so no two
// workers refund the same payment at the same moment and every payment gets a few dozen
// partial refunds over a run (4990 ÷ 10: up to 499 each).

const (
	refundName     = "refund a payment (dashboard API)"
	refundPayments = 256
	refundAmount   = 10
	refundBody     = `{"amount":10,"reason":"requested_by_customer"}`
)

// refundBench is the refund scenario's merchant: its dashboard session and its payments.
type refundBench struct {
	dashboard string
	headers   map[string]string // session cookie and CSRF token
	payments  []string
}

// setupRefundBench creates a merchant with a dashboard owner, pays refundPayments sessions
// through the API (16 at a time) and reads their payment ids from the database.
func setupRefundBench(ctx context.Context, t *harness.Target) (*refundBench, error) {
	if t.DashboardURL == "" || t.DatabaseURL == "" || t.CheckoutURL == "" {
		return nil, fmt.Errorf("needs the dashboard, checkout and database URLs")
	}
	email := "bench-refunds+" + strings.ToLower(core.RandomBase62(8)) + "@example.com"
	password := "bench-" + core.RandomBase62(20)
	m, err := createMerchantOwned(ctx, t.BaseURL, t.OperatorToken, "Bench refund merchant", email, password)
	if err != nil {
		return nil, err
	}
	pay := api{base: t.BaseURL, key: m.TestKey}.pay(t.CheckoutURL)
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		first atomic.Value
	)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := pay.newOp(w)
			for next.Add(1) <= refundPayments && ctx.Err() == nil {
				if err := o(ctx); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return nil, fmt.Errorf("pay the payments to refund: %w", err)
	}
	db, err := openFloorDB(ctx, t.DatabaseURL, 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rb := &refundBench{dashboard: t.DashboardURL}
	if err := db.SelectContext(ctx, &rb.payments, `SELECT id FROM payments
		WHERE merchant_id = $1 AND environment = 'test' AND status = 'succeeded' ORDER BY seq`, m.ID); err != nil {
		return nil, fmt.Errorf("payments to refund: %w", err)
	}
	if len(rb.payments) < refundPayments {
		return nil, fmt.Errorf("%d payments to refund, want %d", len(rb.payments), refundPayments)
	}
	if rb.headers, err = dashboardSignIn(ctx, t.DashboardURL, email, password); err != nil {
		return nil, err
	}
	return rb, nil
}

// scenario refunds refundAmount of the worker's next payment, each request with a key of its
// own (a first request, never a replay).
func (rb *refundBench) scenario(conns int) scenario {
	return scenario{name: refundName, floor: floorInsert, newOp: func(w int) op {
		c := newClient(1)
		hdr := make(map[string]string, len(rb.headers)+1)
		for k, v := range rb.headers {
			hdr[k] = v
		}
		n := 0
		return func(ctx context.Context) error {
			id := rb.payments[(w+n*conns)%len(rb.payments)]
			n++
			hdr["Idempotency-Key"] = "bench-refund-" + core.RandomBase62(16)
			st, _, b, err := do(ctx, c, http.MethodPost, rb.dashboard+"/api/v1/test/payments/"+id+"/refunds", "", hdr, refundBody)
			if err := check(st, b, err); err != nil {
				return err
			}
			var r struct {
				Status string `json:"status"`
				Amount int64  `json:"amount"`
			}
			if err := json.Unmarshal(b, &r); err != nil || r.Status != "succeeded" || r.Amount != refundAmount {
				return fmt.Errorf("refund: unexpected body %.200s", b)
			}
			return nil
		}
	}}
}

// dashboardSignIn signs in to the dashboard and returns the headers of an authenticated
// state-changing request (session cookie, CSRF token, JSON body).
func dashboardSignIn(ctx context.Context, dashboard, email, password string) (map[string]string, error) {
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, dashboard+"/api/v1/session", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := newClient(1).Do(req)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := check(resp.StatusCode, b, nil); err != nil {
		return nil, fmt.Errorf("dashboard sign-in: %w", err)
	}
	var s struct {
		CSRF string `json:"csrf_token"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.CSRF == "" {
		return nil, fmt.Errorf("dashboard sign-in: unexpected body %.200s", b)
	}
	var cookies []string
	for _, ck := range resp.Cookies() {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	return map[string]string{"X-CSRF-Token": s.CSRF, "Cookie": strings.Join(cookies, "; "), "Content-Type": "application/json"}, nil
}
