package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Crash safety of recurring billing (issue 16, tests): the server killed (SIGKILL) at every
// step of a renewal, in the middle of a renewal run under load, between the phases of a keyed
// plan change and between the two units of work of a subscription checkout. The cases see the
// server only from outside: its HTTP API, and its database, where a step is "the statement
// that writes X" (a trigger pauses it, phasePause) and the work done is what the rows say. No
// case names a function of the server, so a renewal run built another way (batched,
// concurrent) is held to the same invariants.
//
// A case whose kill leaves a charge attempt pending (recorded, its outcome not applied) takes
// about 40 s: such an attempt is resolved by asking the processor only once it is older than
// the charge protocol's grace (30 s of wall clock, longer than a processor call may take).

// crashEnv runs the background sweeps every second, so that a new server resumes what a killed
// one left at once.
var crashEnv = map[string]string{"KASSA_SWEEP_INTERVAL": "1s"}

// crashSubscribe creates a subscription of price for the merchant of c (an API client of srv)
// and pays its first invoice through the browser API of srv: it is active.
func crashSubscribe(t *testing.T, srv *harness.Target, c *api.ClientWithResponses, price, email string) api.Subscription {
	t.Helper()
	ctx := context.Background()
	cr, err := c.CreateSubscriptionWithResponse(ctx, nil, wire.SubscriptionCreate{PriceId: price,
		CustomerName: "Ada Lovelace", CustomerEmail: email})
	if err != nil || cr.JSON200 == nil {
		t.Fatalf("create subscription: %v", err)
	}
	s := *cr.JSON200
	id, secret := subPI(t, s)
	r, err := inflightPay(t, srv, secret).ConfirmBuyerPaymentIntentWithResponse(ctx, id, payCard(payCardOK))
	if err != nil || r.JSON200 == nil || r.JSON200.SubscriptionStatus != "active" {
		t.Fatalf("first payment of %s: %v", s.Id, err)
	}
	return s
}

// crashInvoiceFacts is what the database holds about one invoice of a subscription.
type crashInvoiceFacts struct {
	ID        string  `db:"id"`
	Sub       string  `db:"subscription_id"`
	Status    string  `db:"status"`
	Number    *string `db:"number"`
	Charged   int     `db:"charged"`   // succeeded charges in the sandbox processor's journal
	Payments  int     `db:"payments"`  // payments of the invoice
	Receipts  int     `db:"receipts"`  // receipt e-mails queued for its payments
	Sent      int     `db:"sent"`      // of which sent
	Delivered int     `db:"delivered"` // messages in the development mailbox for them
	Finalized int     `db:"finalized"` // invoice.finalized
	Succeeded int     `db:"succeeded"` // invoice.payment_succeeded
	Paid      int     `db:"paid"`      // invoice.paid
	PISuccess int     `db:"pi_succeeded"`
}

// crashInvoices reads the facts of every subscription invoice of merchant.
func crashInvoices(t *testing.T, db *sqlx.DB, merchant string) []crashInvoiceFacts {
	t.Helper()
	var out []crashInvoiceFacts
	if err := db.Select(&out, `SELECT i.id, i.subscription_id, i.status, i.number,
			(SELECT count(*) FROM sandbox_charges c WHERE c.merchant_id = i.merchant_id AND c.environment = i.environment
				AND c.idempotency_key LIKE i.id || ':%' AND c.result->>'Outcome' = 'succeeded') AS charged,
			(SELECT count(*) FROM payments p WHERE p.merchant_id = i.merchant_id AND p.environment = i.environment AND p.invoice_id = i.id) AS payments,
			(SELECT count(*) FROM mail_outbox o JOIN payments p ON p.merchant_id = o.merchant_id AND p.environment = o.environment AND p.id = o.subject_id
				WHERE o.merchant_id = i.merchant_id AND o.environment = i.environment AND o.kind = 'receipt' AND p.invoice_id = i.id) AS receipts,
			(SELECT count(*) FROM mail_outbox o JOIN payments p ON p.merchant_id = o.merchant_id AND p.environment = o.environment AND p.id = o.subject_id
				WHERE o.merchant_id = i.merchant_id AND o.environment = i.environment AND o.kind = 'receipt' AND p.invoice_id = i.id
				AND o.status = 'sent') AS sent,
			(SELECT count(*) FROM mailbox_messages b JOIN mail_outbox o ON o.merchant_id = b.merchant_id AND o.environment = b.environment AND o.id = b.mail_id
				JOIN payments p ON p.merchant_id = o.merchant_id AND p.environment = o.environment AND p.id = o.subject_id
				WHERE b.merchant_id = i.merchant_id AND b.environment = i.environment AND o.kind = 'receipt' AND p.invoice_id = i.id) AS delivered,
			(SELECT count(*) FROM events e WHERE e.merchant_id = i.merchant_id AND e.environment = i.environment AND e.object_id = i.id AND e.type = 'invoice.finalized') AS finalized,
			(SELECT count(*) FROM events e WHERE e.merchant_id = i.merchant_id AND e.environment = i.environment AND e.object_id = i.id AND e.type = 'invoice.payment_succeeded') AS succeeded,
			(SELECT count(*) FROM events e WHERE e.merchant_id = i.merchant_id AND e.environment = i.environment AND e.object_id = i.id AND e.type = 'invoice.paid') AS paid,
			(SELECT count(*) FROM events e JOIN payments p ON p.merchant_id = e.merchant_id AND p.environment = e.environment AND p.id = e.object_id
				WHERE e.merchant_id = i.merchant_id AND e.environment = i.environment AND p.invoice_id = i.id AND e.type = 'payment_intent.succeeded') AS pi_succeeded
		FROM invoices i WHERE i.merchant_id = $1 AND i.environment = 'test' AND i.subscription_id IS NOT NULL
		ORDER BY i.seq`, merchant); err != nil {
		t.Fatal(err)
	}
	return out
}

// crashWantNumbers fails unless the merchant's invoice numbers are unique and, per year, run
// 1…n without a gap, and the year's counter stands at n (no number taken by work that did not
// commit).
func crashWantNumbers(t *testing.T, db *sqlx.DB, merchant string) {
	t.Helper()
	var years []struct {
		Year     string `db:"year"`
		Count    int    `db:"count"`
		Distinct int    `db:"distinct"`
		Min      int    `db:"min"`
		Max      int    `db:"max"`
		Counter  *int   `db:"counter"`
	}
	if err := db.Select(&years, `SELECT y.year, y.count, y.distinct, y.min, y.max,
			(SELECT c.last FROM invoice_number_counters c WHERE c.merchant_id = $1 AND c.environment = 'test' AND c.year::text = y.year) AS counter
		FROM (SELECT substring(number FROM '-INV-([0-9]+)-[0-9]+$') AS year, count(*) AS count,
				count(DISTINCT number) AS distinct,
				min(substring(number FROM '([0-9]+)$')::int) AS min, max(substring(number FROM '([0-9]+)$')::int) AS max
			FROM invoices WHERE merchant_id = $1 AND environment = 'test' AND number IS NOT NULL GROUP BY 1) y`, merchant); err != nil {
		t.Fatal(err)
	}
	if len(years) == 0 {
		t.Fatal("no numbered invoice")
	}
	for _, y := range years {
		if y.Count != y.Distinct || y.Min != 1 || y.Max != y.Count || y.Counter == nil || *y.Counter != y.Count {
			t.Fatalf("invoice numbers of %s: %+v, want 1…n unique, gap-free, the counter at n", y.Year, y)
		}
	}
}

// crashWantRenewed fails unless every subscription in subs has exactly its first invoice and
// one renewal invoice, each paid by exactly one charge at the processor with one payment, its
// four events once and one receipt queued; delivered says that every receipt must be sent and
// in the mailbox (else: in it at most once, and sent only if in it).
func crashWantRenewed(t *testing.T, db *sqlx.DB, merchant string, subs map[string]bool, delivered bool) {
	t.Helper()
	per := map[string]int{}
	for _, f := range crashInvoices(t, db, merchant) {
		per[f.Sub]++
		ok := f.Status == "paid" && f.Number != nil && f.Charged == 1 && f.Payments == 1 && f.Receipts == 1 &&
			f.Finalized == 1 && f.Succeeded == 1 && f.Paid == 1 && f.PISuccess == 1
		if delivered {
			ok = ok && f.Sent == 1 && f.Delivered == 1
		} else {
			// A killed server may have kept the message and not marked the mail sent: the
			// next sending keeps nothing new.
			ok = ok && f.Delivered <= 1 && f.Sent <= f.Delivered
		}
		if !ok {
			t.Fatalf("invoice %+v: want paid and numbered, one succeeded charge at the processor, one payment, one receipt queued (and kept once when sent), invoice.finalized, payment_intent.succeeded, invoice.payment_succeeded and invoice.paid once each", f)
		}
	}
	for s := range subs {
		if per[s] != 2 {
			t.Fatalf("subscription %s has %d invoices, want its first and one renewal", s, per[s])
		}
	}
	if len(per) != len(subs) {
		t.Fatalf("invoices of %d subscriptions, want %d", len(per), len(subs))
	}
	crashWantNumbers(t, db, merchant)
}

// crashWaitDone waits until every clock of merchants stands at target with no advance under
// way, want subscription invoices are paid, and (mailed) every mail is sent. Only where no
// killed server may have taken a mail for sending: such a mail is sent again when its lease
// ends, minutes later.
func crashWaitDone(t *testing.T, db *sqlx.DB, merchants []string, target int64, want int, mailed bool, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var st struct {
			Clocks  int `db:"clocks"`
			Paid    int `db:"paid"`
			Pending int `db:"pending"`
		}
		if err := db.Get(&st, `SELECT
				(SELECT count(*) FROM test_clocks WHERE merchant_id = ANY($1) AND advance_to IS NULL
					AND extract(epoch FROM frozen_time)::bigint = $2) AS clocks,
				(SELECT count(*) FROM invoices WHERE merchant_id = ANY($1) AND environment = 'test'
					AND subscription_id IS NOT NULL AND status = 'paid') AS paid,
				(SELECT count(*) FROM mail_outbox WHERE merchant_id = ANY($1) AND status = 'pending') AS pending`,
			pq.Array(merchants), target); err != nil {
			t.Fatal(err)
		}
		if st.Clocks == len(merchants) && st.Paid == want && (!mailed || st.Pending == 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not finished within %s: %d of %d clocks at %d, %d of %d invoices paid, %d mails queued",
				within, st.Clocks, len(merchants), target, st.Paid, want, st.Pending)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The renewal of one subscription killed at each of its steps, each step being the statement
// that writes it (the kill lands before that statement commits, so the step before it is
// done and it is not), then finished by a new server's sweep: one charge at the processor
// for the period, one payment, invoice numbers gap-free and unique, the events and the
// receipt once.
func TestSubscriptionRenewalCrashSteps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, table, events, when string
		// What the killed server left of the renewal: its invoice, and the attempts and
		// processor charges of it.
		invoices, attempts, charges int
		paid                        bool
	}{
		{"as the renewal invoice is created and finalised", "invoices", "INSERT", "NEW.subscription_id IS NOT NULL", 0, 0, 0, false},
		{"after the invoice is finalised, as the charge attempt is recorded", "charge_attempts", "INSERT", "NEW.reference <> '$first'", 1, 0, 0, false},
		{"after the charge attempt is recorded, as the processor takes the charge", "sandbox_charges", "INSERT", "NEW.idempotency_key NOT LIKE '$first:%'", 1, 1, 0, false},
		{"after the processor charged, before the outcome is applied", "payments", "INSERT", "NEW.invoice_id IS NOT NULL AND NEW.invoice_id <> '$first'", 1, 1, 1, false},
		{"after the outcome is applied, as the clock's advance ends", "test_clocks", "UPDATE", "NEW.advance_to IS NULL AND OLD.advance_to IS NOT NULL", 1, 1, 1, true},
		{"after the events and the receipt are queued, as the receipt is taken for sending", "mail_outbox", "UPDATE", "NEW.kind = 'receipt' AND NEW.attempts > OLD.attempts", 1, 1, 1, true},
	}
	for i, c := range cases {
		harness.Rule(t, "D14", "a renewal killed (SIGKILL) "+c.name+" is finished by a new server: one charge for the period, gap-free numbers, its events and receipt once", func(t *testing.T) {
			t.Parallel()
			name := "renewal-step-" + strconv.Itoa(i)
			first, db := idemLone(t, name, crashEnv)
			o := newDashOwnerAt(t, first)
			clockFreeze(t, o.Test)
			pr := subPrice(t, o.Merchant, 900, nil)
			s := crashSubscribe(t, first, o.Test, pr.Id, "ada@example.com")
			// The first payment's receipt is sent before the renewal starts (the last case
			// pauses the sending of the renewal's).
			crashWaitDone(t, db, []string{o.ID}, s.Created, 1, true, 30*time.Second)

			pause := phasePause(t, db, c.table, c.events, strings.ReplaceAll(c.when, "$first", *s.LatestInvoice))
			body := `{"to":` + strconv.FormatInt(s.CurrentPeriodEnd, 10) + `}`
			pending := idemSendPath(first.BaseURL, "/v1/test_helpers/clock/advance", o.TestKey, idemKey(), body)
			phaseWaitPaused(t, db)
			phaseKill(t, first, db, pause, c.table)
			// The receipt is sent after the advance: only there may the advance have answered.
			if r, ok := <-pending; ok && c.table != "mail_outbox" {
				t.Fatalf("the killed server answered the advance: %d %s", r.Status, r.Body)
			}
			var left struct {
				Invoices int  `db:"invoices"`
				Attempts int  `db:"attempts"`
				Charges  int  `db:"charges"`
				Paid     bool `db:"paid"`
			}
			if err := db.Get(&left, `SELECT
					(SELECT count(*) FROM invoices WHERE subscription_id = $1 AND id <> $2) AS invoices,
					(SELECT count(*) FROM charge_attempts WHERE merchant_id = $3 AND reference <> $2) AS attempts,
					(SELECT count(*) FROM sandbox_charges WHERE merchant_id = $3 AND idempotency_key LIKE 'in\_%'
						AND idempotency_key NOT LIKE $2 || ':%') AS charges,
					EXISTS (SELECT 1 FROM invoices WHERE subscription_id = $1 AND id <> $2 AND status = 'paid') AS paid`,
				s.Id, *s.LatestInvoice, o.ID); err != nil {
				t.Fatal(err)
			}
			if left.Invoices != c.invoices || left.Attempts != c.attempts || left.Charges != c.charges || left.Paid != c.paid {
				t.Fatalf("the killed server left %+v, want %d invoices, %d attempts, %d processor charges, paid %v (the kill did not land at its step)",
					left, c.invoices, c.attempts, c.charges, c.paid)
			}

			second, err := first.Sibling(context.Background(), name+"-2", harness.Options{Env: mergeEnv(hookServerEnv, crashEnv)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(second.Stop)
			// The receipt is in the mailbox at most once, or still queued when the killed server
			// had taken it for sending; killed as it was taken, it is sent by the new server.
			mailed := c.table == "mail_outbox"
			crashWaitDone(t, db, []string{o.ID}, s.CurrentPeriodEnd, 2, mailed, 90*time.Second)
			crashWantRenewed(t, db, o.ID, map[string]bool{s.Id: true}, mailed)
			var end int64
			if err := db.Get(&end, `SELECT extract(epoch FROM period_end)::bigint FROM subscriptions WHERE id = $1`, s.Id); err != nil {
				t.Fatal(err)
			}
			if end != subNextMonth(s.CurrentPeriodEnd) {
				t.Fatalf("period ends at %d, want %d (advanced once)", end, subNextMonth(s.CurrentPeriodEnd))
			}
		})
	}
}

func mergeEnv(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// A renewal run under load: 240 subscriptions of 4 merchants due at one instant, renewed by
// the merchants' clock advances at once; the server is killed twice at a random point of the
// run's progress (how many renewals are paid, not a named step), and a third server finishes
// the run. Every subscription is charged once for its period, with one payment, its events
// once and one receipt queued (sent at most once: a receipt a killed server had taken for
// sending waits out its lease), and every merchant's numbers are gap-free and unique.
func TestSubscriptionRenewalRunCrash(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "a renewal run under load killed (SIGKILL) twice at random moments is finished by a new server: no period charged twice, no number skipped or used twice, each renewal done with its events and receipt", func(t *testing.T) {
		t.Parallel()
		const merchants, perMerchant = 4, 60
		const total = merchants * perMerchant
		srv, db := idemLone(t, "renewal-run-crash", crashEnv)
		ctx := context.Background()
		// Every clock frozen at the same instant: the subscriptions' periods end together.
		at := time.Now().Add(time.Hour).Unix()
		owners := make([]*DashOwner, merchants)
		ids := make([]string, merchants)
		prices := make([]string, merchants)
		for i := range owners {
			o := newDashMerchantAt(t, srv, true)
			if r, err := o.Test.AdvanceTestClockWithResponse(ctx, nil, api.TestClockAdvance{To: ptr(at)}); err != nil || r.StatusCode() != 200 {
				t.Fatalf("freeze the clock: %v", err)
			}
			owners[i], ids[i] = o, o.ID
			prices[i] = subPrice(t, o.Merchant, 900+int64(i)*100, nil).Id
		}
		subs := make([]map[string]bool, merchants)
		var mu sync.Mutex
		var end atomic.Int64
		var wg sync.WaitGroup
		for i := range owners {
			subs[i] = map[string]bool{}
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range perMerchant / 2 {
						s := crashSubscribe(t, srv, owners[i].Test, prices[i], fmt.Sprintf("c%d-%d@example.com", w, n))
						mu.Lock()
						subs[i][s.Id] = true
						mu.Unlock()
						end.Store(s.CurrentPeriodEnd)
					}
				}()
			}
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		target := end.Load()
		crashWaitDone(t, db, ids, at, total, true, 60*time.Second)

		progress := func() int {
			var n int
			if err := db.Get(&n, `SELECT count(*) FROM invoices WHERE merchant_id = ANY($1) AND environment = 'test'
				AND subscription_id IS NOT NULL AND status = 'paid'`, pq.Array(ids)); err != nil {
				t.Fatal(err)
			}
			return n - total
		}
		// killAt kills s once progress reaches at least n renewals (or within s seconds, if
		// it stalls: a renewal cut by the last kill waits out its attempt's grace).
		killAt := func(s *harness.Target, n int, within time.Duration) int {
			deadline := time.Now().Add(within)
			for progress() < n && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			s.Kill()
			return progress()
		}
		advanceAll := func(s *harness.Target) {
			for _, o := range owners {
				body := `{"to":` + strconv.FormatInt(target, 10) + `}`
				go func() { <-idemSendPath(s.BaseURL, "/v1/test_helpers/clock/advance", o.TestKey, idemKey(), body) }()
			}
		}
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 16))
		firstKill := total/10 + rng.IntN(total/2)
		advanceAll(srv)
		done := killAt(srv, firstKill, 60*time.Second)
		t.Logf("first server killed at %d of %d renewals paid (aimed at %d)", done, total, firstKill)

		second, err := srv.Sibling(ctx, "renewal-run-crash-2", harness.Options{Env: mergeEnv(hookServerEnv, crashEnv)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		advanceAll(second)
		secondKill := done + 1 + rng.IntN(max(1, (total-done)/2))
		done = killAt(second, secondKill, 20*time.Second)
		t.Logf("second server killed at %d of %d renewals paid (aimed at %d)", done, total, secondKill)

		third, err := srv.Sibling(ctx, "renewal-run-crash-3", harness.Options{Env: mergeEnv(hookServerEnv, crashEnv)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(third.Stop)
		advanceAll(third)
		// A kill right after a batch's charges began leaves up to a merchant's whole batch of
		// attempts pending; they wait out their 30 s grace before the sweep resolves them, so
		// the third server's run takes about a minute on a quiet machine. 240 s is the hang
		// guard, twice what a loaded run has needed.
		crashWaitDone(t, db, ids, target, 2*total, false, 240*time.Second)
		for i, o := range owners {
			crashWantRenewed(t, db, o.ID, subs[i], false)
		}
		// A receipt not yet in the mailbox is still queued: taken by a killed server, it is
		// sent once its lease ends.
		var lost int
		if err := db.Get(&lost, `SELECT count(*) FROM mail_outbox o WHERE o.merchant_id = ANY($1) AND o.kind = 'receipt'
			AND o.status <> 'pending' AND NOT EXISTS (SELECT 1 FROM mailbox_messages b
				WHERE b.merchant_id = o.merchant_id AND b.environment = o.environment AND b.mail_id = o.id)`, pq.Array(ids)); err != nil {
			t.Fatal(err)
		}
		if lost != 0 {
			t.Fatalf("%d receipts marked done and not in the mailbox", lost)
		}
	})
}

// A keyed always_invoice plan change killed between its phases (the key recorded as started;
// the change and its proration invoice committed; the charge made) and retried with the same
// key on a new server: the retry completes it once (one proration invoice, one charge, one
// payment), answers the subscription as changed and paid, and is replayed from then on.
func TestSubscriptionPlanChangeCrash(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, table, events, when string
		invoices                  int // proration invoices the killed server left
	}{
		{"after the key was recorded, as the change and its invoice are recorded", "invoices", "INSERT", "true", 0},
		{"after the change and its invoice were recorded, as the charge attempt is recorded", "charge_attempts", "INSERT", "true", 1},
		{"after the proration was charged, as the response is stored", "idempotency_keys", "UPDATE", "NEW.status IS NOT NULL AND OLD.status IS NULL", 1},
	}
	for i, c := range cases {
		harness.Rule(t, "8", "a keyed always_invoice plan change killed (SIGKILL) "+c.name+" is completed once by the retry with its key: one proration invoice, one charge, one answer", func(t *testing.T) {
			t.Parallel()
			name := "plan-change-crash-" + strconv.Itoa(i)
			first, db := idemLone(t, name, crashEnv)
			o := newDashOwnerAt(t, first)
			clockFreeze(t, o.Test)
			pr := subPrice(t, o.Merchant, 1000, &api.RecurringParams{Interval: wire.RecurringIntervalWeek})
			s := crashSubscribe(t, first, o.Test, pr.Id, "ada@example.com")
			// One day in, six of seven remain: quantity 1 → 2 nets 1714 − 857 = 857.
			clockAdvance(t, o.Test, 86400)

			pause := phasePause(t, db, c.table, c.events, c.when)
			key := idemKey()
			body := `{"quantity":2,"proration_behavior":"always_invoice"}`
			path := "/v1/subscriptions/" + s.Id
			pending := idemSendPath(first.BaseURL, path, o.TestKey, key, body)
			phaseWaitPaused(t, db)
			phaseKill(t, first, db, pause, c.table)
			if r, ok := <-pending; ok {
				t.Fatalf("the killed server answered: %d %s", r.Status, r.Body)
			}
			var left int
			if err := db.Get(&left, `SELECT count(*) FROM invoices WHERE subscription_id = $1 AND id <> $2`, s.Id, *s.LatestInvoice); err != nil {
				t.Fatal(err)
			}
			if left != c.invoices {
				t.Fatalf("the killed server left %d proration invoices, want %d", left, c.invoices)
			}

			second, err := first.Sibling(context.Background(), name+"-2", harness.Options{Env: mergeEnv(hookServerEnv, crashEnv)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(second.Stop)
			retry := rawAt(t, second.BaseURL, http.MethodPost, path, o.TestKey, body, map[string]string{"Idempotency-Key": key})
			if retry.Status != 200 || retry.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("retry: %d replayed=%q %s", retry.Status, retry.Header.Get("Idempotent-Replayed"), retry.Body)
			}
			got := catDecode[api.Subscription](t, retry)
			if got.Quantity != 2 || got.Amount != 2000 || got.Status != wire.SubscriptionStatusActive || got.LatestInvoice == nil ||
				*got.LatestInvoice == *s.LatestInvoice {
				t.Fatalf("the retry answered %+v, want quantity 2, active, the proration invoice latest", got)
			}
			var inv struct {
				Status   string `db:"status"`
				Total    int64  `db:"total"`
				Invoices int    `db:"invoices"`
			}
			if err := db.Get(&inv, `SELECT status,
					(SELECT COALESCE(sum(amount), 0) FROM payments WHERE invoice_id = $1) AS total,
					(SELECT count(*) FROM invoices WHERE subscription_id = $2) AS invoices
				FROM invoices WHERE id = $1`, *got.LatestInvoice, s.Id); err != nil {
				t.Fatal(err)
			}
			if inv.Status != "paid" || inv.Total != 857 || inv.Invoices != 2 {
				t.Fatalf("proration invoice %+v, want one, paid, 857", inv)
			}
			crashWaitDone(t, db, []string{o.ID}, s.Created+86400, 2, false, 30*time.Second)
			crashWantRenewed(t, db, o.ID, map[string]bool{s.Id: true}, false)
			wantReplay(t, retry, rawAt(t, second.BaseURL, http.MethodPost, path, o.TestKey, body, map[string]string{"Idempotency-Key": key}))
		})
	}
}

// A subscription-mode checkout session killed between its two units of work (the first
// payment made and applied; the session not yet completed with `subscription`): the retried
// confirmation completes the session without a second charge or a second subscription.
func TestCheckoutSubscriptionCrash(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D14", "a subscription checkout killed (SIGKILL) between its first payment and its completion is completed by the retried confirmation: no second charge, no second subscription", func(t *testing.T) {
		t.Parallel()
		first, db := idemLone(t, "checkout-sub-crash", crashEnv)
		o := newDashOwnerAt(t, first)
		ctx := context.Background()
		price := subPrice(t, o.Merchant, 900, nil)
		r := rawAt(t, first.BaseURL, http.MethodPost, "/v1/checkout/sessions", o.TestKey, rawJSON(t, csSubBody(price.Id, 1)), nil)
		s := csWantOK(t, r)

		pause := phasePause(t, db, "checkout_sessions", "UPDATE", "NEW.status = 'complete'")
		confirmed := make(chan int, 1)
		go func() {
			resp, err := inflightPay(t, first, s.ClientSecret).ConfirmBuyerSessionWithResponse(ctx, s.Id, payCard(payCardOK))
			if err != nil {
				close(confirmed)
				return
			}
			confirmed <- resp.StatusCode()
		}()
		phaseWaitPaused(t, db)
		phaseKill(t, first, db, pause, "checkout_sessions")
		if st, ok := <-confirmed; ok {
			t.Fatalf("the killed server answered the confirmation: %d", st)
		}
		var left struct {
			Status string  `db:"status"`
			Sub    *string `db:"subscription_id"`
			Active int     `db:"active"`
		}
		if err := db.Get(&left, `SELECT status, subscription_id,
				(SELECT count(*) FROM subscriptions WHERE merchant_id = $2 AND status = 'active') AS active
			FROM checkout_sessions WHERE id = $1`, s.Id, o.ID); err != nil {
			t.Fatal(err)
		}
		if left.Status != "open" || left.Sub == nil || left.Active != 1 {
			t.Fatalf("the killed server left %+v, want an open session naming the one active subscription", left)
		}

		second, err := first.Sibling(ctx, "checkout-sub-crash-2", harness.Options{Env: mergeEnv(hookServerEnv, crashEnv)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		resp, err := inflightPay(t, second, s.ClientSecret).ConfirmBuyerSessionWithResponse(ctx, s.Id, payCard(payCardOK))
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("retried confirmation: %v %d %s", err, resp.StatusCode(), resp.Body)
		}
		got := csGet(t, clientAt(t, second.BaseURL, o.TestKey), s.Id)
		if got.Status != wire.CheckoutSessionStatusComplete || got.Subscription == nil || *got.Subscription != *left.Sub {
			t.Fatalf("session after the retry: status %s subscription %v, want complete with %s", got.Status, got.Subscription, *left.Sub)
		}
		var n struct {
			Subs      int `db:"subs"`
			Invoices  int `db:"invoices"`
			Charges   int `db:"charges"`
			Payments  int `db:"payments"`
			Completed int `db:"completed"`
			Created   int `db:"created"`
		}
		if err := db.Get(&n, `SELECT
				(SELECT count(*) FROM subscriptions WHERE merchant_id = $1) AS subs,
				(SELECT count(*) FROM invoices WHERE merchant_id = $1) AS invoices,
				(SELECT count(*) FROM sandbox_charges WHERE merchant_id = $1 AND idempotency_key LIKE 'in\_%') AS charges,
				(SELECT count(*) FROM payments WHERE merchant_id = $1) AS payments,
				(SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'checkout.session.completed') AS completed,
				(SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'customer.subscription.created') AS created`, o.ID); err != nil {
			t.Fatal(err)
		}
		if n.Subs != 1 || n.Invoices != 1 || n.Charges != 1 || n.Payments != 1 || n.Completed != 1 || n.Created != 1 {
			t.Fatalf("after the retry: %+v, want one subscription, invoice, processor charge, payment, checkout.session.completed and customer.subscription.created", n)
		}
	})
}
