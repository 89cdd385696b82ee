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

// A renewal killed (SIGKILL) after the processor charged it and before the charge was
// recorded is finished by a new server's sweep from the processor's answer: the renewal
// invoice is paid once, with one payment and one charge at the processor, and the period
// advances once.
func TestSubscriptionRenewalCrash(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "a renewal killed (SIGKILL) between the charge and its record is finished from the processor's answer: no second charge", func(t *testing.T) {
		t.Parallel()
		env := map[string]string{"KASSA_SWEEP_INTERVAL": "1s"}
		first, db := idemLone(t, "renewal-crash", env)
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
		// The renewal's charge is applied as the invoice is paid: the processor has charged.
		pause := phasePause(t, db, "invoices", "UPDATE", "NEW.status = 'paid' AND NEW.id <> '"+*s.LatestInvoice+"'")
		seconds := s.CurrentPeriodEnd - s.Created
		advanced := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, first.BaseURL+"/v1/test_helpers/clock/advance",
				strings.NewReader(`{"seconds":`+strconv.FormatInt(seconds, 10)+`}`))
			req.Header.Set("Authorization", "Bearer "+o.TestKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
			if err != nil {
				close(advanced)
				return
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			advanced <- resp.StatusCode
		}()
		phaseWaitPaused(t, db)
		phaseKill(t, first, db, pause, "invoices")
		if st, ok := <-advanced; ok {
			t.Fatalf("the killed server answered the advance: %d", st)
		}
		second, err := first.Sibling(ctx, "renewal-crash-2", harness.Options{Env: env})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		var renewal string
		if err := db.Get(&renewal, `SELECT id FROM invoices WHERE subscription_id = $1 AND id <> $2`, s.Id, *s.LatestInvoice); err != nil {
			t.Fatalf("the renewal invoice was not recorded before the charge: %v", err)
		}
		deadline := time.Now().Add(90 * time.Second)
		for {
			var status string
			if err := db.Get(&status, `SELECT status FROM invoices WHERE id = $1`, renewal); err != nil {
				t.Fatal(err)
			}
			if status == "paid" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the renewal was not finished within 90 s (invoice %s)", status)
			}
			time.Sleep(500 * time.Millisecond)
		}
		var counts struct {
			Charges  int   `db:"charges"`
			Payments int   `db:"payments"`
			Invoices int   `db:"invoices"`
			Events   int   `db:"events"`
			End      int64 `db:"period_end"`
		}
		if err := db.Get(&counts, `SELECT
				(SELECT count(*) FROM sandbox_charges WHERE idempotency_key LIKE $2 || ':%') AS charges,
				(SELECT count(*) FROM payments WHERE invoice_id = $2) AS payments,
				(SELECT count(*) FROM invoices WHERE subscription_id = $1) AS invoices,
				(SELECT count(*) FROM events WHERE type = 'invoice.payment_succeeded' AND object_id = $2) AS events,
				(SELECT extract(epoch FROM period_end)::bigint FROM subscriptions WHERE id = $1) AS period_end`,
			s.Id, renewal); err != nil {
			t.Fatal(err)
		}
		if counts.Charges != 1 || counts.Payments != 1 || counts.Invoices != 2 || counts.Events != 1 || counts.End != subNextMonth(s.CurrentPeriodEnd) {
			t.Fatalf("after the crash: %+v, want one charge, one payment, two invoices, one invoice.payment_succeeded, the period advanced once", counts)
		}
	})
}
