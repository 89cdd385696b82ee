package conformance

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// clockAdvanceAt advances the merchant's test clock by seconds on server srv, in the
// background; the channel gets the status, or is closed when the server died.
func clockAdvanceAt(srv *harness.Target, key string, seconds int64) chan int {
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.BaseURL+"/v1/test_helpers/clock/advance",
			strings.NewReader(`{"seconds":`+strconv.FormatInt(seconds, 10)+`}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			close(done)
			return
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

// A renewal killed (SIGKILL) inside the unit of work that makes its invoice and consumes the
// kept proration lines leaves both undone; the retried renewal bills the lines once.
func TestSubscriptionKeptProrationsCrash(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "a renewal killed while it consumes the kept proration lines commits nothing; the retried renewal bills them once", func(t *testing.T) {
		t.Parallel()
		env := map[string]string{"KASSA_SWEEP_INTERVAL": "1s"}
		first, db := idemLone(t, "prorations-crash", env)
		o := newDashOwnerAt(t, first)
		ctx := context.Background()
		clockFreeze(t, o.Test)
		pr := subPrice(t, o.Merchant, 900, nil)
		cr, err := o.Test.CreateSubscriptionWithResponse(ctx, nil, wire.SubscriptionCreate{PriceId: pr.Id,
			CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"})
		if err != nil || cr.JSON200 == nil {
			t.Fatalf("create: %v", err)
		}
		s := *cr.JSON200
		id, secret := subPI(t, s)
		if r, err := inflightPay(t, first, secret).ConfirmBuyerPaymentIntentWithResponse(ctx, id, payCard(payCardOK)); err != nil ||
			r.JSON200 == nil || r.JSON200.SubscriptionStatus != "active" {
			t.Fatalf("first payment: %v", err)
		}
		clockAdvance(t, o.Test, 10*86400)
		q, pb := int64(3), wire.SubscriptionUpdateProrationBehaviorCreateProrations
		if r, err := o.Test.UpdateSubscriptionWithResponse(ctx, s.Id, nil, wire.SubscriptionUpdate{Quantity: &q, ProrationBehavior: &pb}); err != nil || r.JSON200 == nil {
			t.Fatalf("update: %v", err)
		}
		// Paused at the renewal's save of the subscription, after its invoice was inserted.
		pause := phasePause(t, db, "subscriptions", "UPDATE", "OLD.pending_lines <> '[]'::jsonb AND NEW.pending_lines = '[]'::jsonb")
		advanced := clockAdvanceAt(first, o.TestKey, s.CurrentPeriodEnd-s.Created-10*86400)
		phaseWaitPaused(t, db)
		phaseKill(t, first, db, pause, "subscriptions")
		if st, ok := <-advanced; ok {
			t.Fatalf("the killed server answered the advance: %d", st)
		}
		var invoices, kept int
		if err := db.Get(&invoices, `SELECT count(*) FROM invoices WHERE subscription_id = $1`, s.Id); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&kept, `SELECT jsonb_array_length(pending_lines) FROM subscriptions WHERE id = $1`, s.Id); err != nil {
			t.Fatal(err)
		}
		if invoices != 1 || kept != 2 {
			t.Fatalf("after the kill: %d invoices, %d kept lines; want the first invoice only and both lines kept", invoices, kept)
		}
		second, err := first.Sibling(ctx, "prorations-crash-2", harness.Options{Env: env})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		// The new server finishes the interrupted advance, and the renewal with it.
		deadline := time.Now().Add(90 * time.Second)
		for {
			var status string
			err := db.Get(&status, `SELECT status FROM invoices WHERE subscription_id = $1 AND id <> $2`, s.Id, *s.LatestInvoice)
			if err == nil && status == "paid" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the renewal was not made within 90 s (%v, %q)", err, status)
			}
			time.Sleep(500 * time.Millisecond)
		}
		var got struct {
			Invoices int   `db:"invoices"`
			Kept     int   `db:"kept"`
			Total    int64 `db:"total"`
		}
		if err := db.Get(&got, `SELECT
				(SELECT count(*) FROM invoices WHERE subscription_id = $1) AS invoices,
				(SELECT jsonb_array_length(pending_lines) FROM subscriptions WHERE id = $1) AS kept,
				(SELECT count(*) FROM invoices i, jsonb_array_elements(i.lines) WHERE i.subscription_id = $1) AS total`, s.Id); err != nil {
			t.Fatal(err)
		}
		if got.Invoices != 2 || got.Kept != 0 || got.Total != 4 {
			t.Fatalf("after the retried renewal: %+v, want two invoices, no kept lines, 1 + 3 lines in all", got)
		}
	})
}
