package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// A renewal run killed (SIGKILL) in the middle of a batch, while several of its charges are
// made at the processor and not yet recorded, is finished by a new server from the
// processor's answers: every subscription of the batch is charged once for its period, with
// one payment, its renewal invoice paid and numbered once, and its period advanced once.
func TestSubscriptionRenewalCrashMidBatch(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "a renewal run killed in the middle of a batch repeats no charge and leaves every renewal done or still due", func(t *testing.T) {
		t.Parallel()
		const subs = 12
		env := map[string]string{"KASSA_SWEEP_INTERVAL": "1s"}
		first, db := idemLone(t, "renewal-batch-crash", env)
		o := newDashOwnerAt(t, first)
		ctx := context.Background()
		clockFreeze(t, o.Test)
		pr := subPrice(t, o.Merchant, 900, nil)
		var (
			ids      []string
			firstInv []string
			ends     []int64
			seconds  int64
		)
		for i := range subs {
			cr, err := o.Test.CreateSubscriptionWithResponse(ctx, nil, wire.SubscriptionCreate{PriceId: pr.Id,
				CustomerName: "Ada Lovelace", CustomerEmail: fmt.Sprintf("ada%d@example.com", i)})
			if err != nil || cr.JSON200 == nil {
				t.Fatalf("create: %v", err)
			}
			s := *cr.JSON200
			id, secret := subPI(t, s)
			if r, err := inflightPay(t, first, secret).ConfirmBuyerPaymentIntentWithResponse(ctx, id, payCard(payCardOK)); err != nil ||
				r.JSON200 == nil || r.JSON200.SubscriptionStatus != "active" {
				t.Fatalf("first payment: %v", err)
			}
			ids, firstInv, ends = append(ids, s.Id), append(firstInv, "'"+*s.LatestInvoice+"'"), append(ends, s.CurrentPeriodEnd)
			seconds = max(seconds, s.CurrentPeriodEnd-s.Created)
		}
		// The renewals' charges are applied as their invoices are paid: each charge that gets
		// there has been made at the processor.
		pause := phasePause(t, db, "invoices", "UPDATE", "NEW.status = 'paid' AND NEW.id NOT IN ("+strings.Join(firstInv, ", ")+")")
		go func() {
			req, _ := http.NewRequest(http.MethodPost, first.BaseURL+"/v1/test_helpers/clock/advance",
				strings.NewReader(`{"seconds":`+strconv.FormatInt(seconds+3600, 10)+`}`))
			req.Header.Set("Authorization", "Bearer "+o.TestKey)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := (&http.Client{Timeout: time.Minute}).Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		// Killed once an outcome waits there and several renewals have been charged at the
		// processor (its journal) without being recorded.
		deadline := time.Now().Add(30 * time.Second)
		for {
			var st struct {
				Waiting int `db:"waiting"`
				Charged int `db:"charged"`
			}
			if err := db.Get(&st, `SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
					AND wait_event_type = 'Lock' AND wait_event = 'advisory') AS waiting,
				(SELECT count(*) FROM sandbox_charges c JOIN invoices i ON c.idempotency_key LIKE i.id || ':%'
					WHERE i.subscription_id IS NOT NULL AND i.id NOT IN (`+strings.Join(firstInv, ", ")+`)) AS charged`); err != nil {
				t.Fatal(err)
			}
			if st.Waiting >= 1 && st.Charged >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the renewals did not reach the pause within 30 s (%+v)", st)
			}
			time.Sleep(50 * time.Millisecond)
		}
		phaseKill(t, first, db, pause, "invoices")
		second, err := first.Sibling(ctx, "renewal-batch-crash-2", harness.Options{Env: env})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		// The advance is resumed by the new server; the charges left pending are resolved from
		// the processor's journal once their grace has passed.
		deadline = time.Now().Add(120 * time.Second)
		for {
			var done int
			if err := db.Get(&done, `SELECT count(*) FROM subscriptions s WHERE s.id = ANY(string_to_array($1, ','))
				AND EXISTS (SELECT 1 FROM invoices i WHERE i.subscription_id = s.id AND i.status = 'paid' AND i.id NOT IN (`+
				strings.Join(firstInv, ", ")+`))`, strings.Join(ids, ",")); err != nil {
				t.Fatal(err)
			}
			if done == subs {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d renewals finished within 120 s of the restart", done, subs)
			}
			time.Sleep(500 * time.Millisecond)
		}
		for i, id := range ids {
			var c struct {
				Invoices int   `db:"invoices"`
				Numbers  int   `db:"numbers"`
				Charges  int   `db:"charges"`
				Payments int   `db:"payments"`
				Events   int   `db:"events"`
				End      int64 `db:"period_end"`
			}
			if err := db.Get(&c, `WITH r AS (SELECT id, number FROM invoices WHERE subscription_id = $1 AND id <> $2)
				SELECT (SELECT count(*) FROM r) AS invoices,
					(SELECT count(DISTINCT number) FROM r) AS numbers,
					(SELECT count(*) FROM sandbox_charges c JOIN r ON c.idempotency_key LIKE r.id || ':%') AS charges,
					(SELECT count(*) FROM payments p JOIN r ON p.invoice_id = r.id) AS payments,
					(SELECT count(*) FROM events e JOIN r ON e.object_id = r.id WHERE e.type = 'invoice.payment_succeeded') AS events,
					(SELECT extract(epoch FROM period_end)::bigint FROM subscriptions WHERE id = $1) AS period_end`,
				id, strings.Trim(firstInv[i], "'")); err != nil {
				t.Fatal(err)
			}
			if c.Invoices != 1 || c.Numbers != 1 || c.Charges != 1 || c.Payments != 1 || c.Events != 1 || c.End != subNextMonth(ends[i]) {
				t.Fatalf("subscription %s after the crash: %+v, want one renewal invoice with its number, one charge, one payment, one invoice.payment_succeeded, the period advanced once", id, c)
			}
		}
		var gaps int
		if err := db.Get(&gaps, `SELECT count(*) - count(DISTINCT number) FROM invoices WHERE subscription_id = ANY(string_to_array($1, ','))`,
			strings.Join(ids, ",")); err != nil {
			t.Fatal(err)
		}
		if gaps != 0 {
			t.Fatalf("%d invoice numbers used twice", gaps)
		}
	})
}
