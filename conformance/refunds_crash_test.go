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
)

// refundSend posts a keyed refund to the dashboard of base as o, answering on the channel
// (closed without an answer when the server died).
func refundSend(o *DashOwner, base, session, paymentID, key, body string) <-chan Raw {
	out := make(chan Raw, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/test/payments/"+paymentID+"/refunds", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		req.Header.Set("X-CSRF-Token", o.CSRF)
		req.AddCookie(&http.Cookie{Name: "kassa_session", Value: session})
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			close(out)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- Raw{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}()
	return out
}

// A keyed refund killed (SIGKILL) at each step after the refund was recorded pending is
// resumed by one retry on a new server: the processor is asked with the refund's key (so it
// gives the money back once), and the refund is applied once, with one charge.refunded.
func TestRefundCrashes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, table, events, when string
	}{
		// The refund is recorded pending; killed as the processor records the refund (the
		// processor never received it).
		{"before the processor gave the money back", "sandbox_refunds", "INSERT", "true"},
		// The processor gave the money back; killed as the refund is applied.
		{"after the processor gave the money back", "refunds", "UPDATE", "NEW.status = 'succeeded'"},
		// Applied; killed as the response is stored under the key.
		{"after the refund was applied", "idempotency_keys", "UPDATE", "NEW.status IS NOT NULL AND OLD.status IS NULL"},
	}
	for i, c := range cases {
		harness.Rule(t, "D16", "a keyed refund killed (SIGKILL) "+c.name+" is resumed by one retry and refunds once", func(t *testing.T) {
			t.Parallel()
			name := "refund-crash-" + strconv.Itoa(i)
			first, db := idemLone(t, name, nil)
			o := newDashOwnerAt(t, first)
			s := csCreate(t, o.Test, sessionBody())
			if r, err := inflightPay(t, first, s.ClientSecret).ConfirmBuyerSessionWithResponse(context.Background(), s.Id,
				payCard(payCardOK)); err != nil || r.StatusCode() != 200 {
				t.Fatalf("pay: %v", err)
			}
			s = csGet(t, o.Test, s.Id)
			session := o.sessionTokenAt(t, first)
			pause := phasePause(t, db, c.table, c.events, c.when)
			key := idemKey()
			body := `{"amount":1000,"reason":"requested_by_customer"}`
			pending := refundSend(o, first.DashboardURL, session, s.Payment.Id, key, body)
			phaseWaitPaused(t, db)
			phaseKill(t, first, db, pause, c.table)
			if r, ok := <-pending; ok {
				t.Fatalf("the killed server answered: %d %s", r.Status, r.Body)
			}

			second, err := first.Sibling(context.Background(), name+"-2", harness.Options{Env: hookServerEnv})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(second.Stop)
			retry := <-refundSend(o, second.DashboardURL, session, s.Payment.Id, key, body)
			if retry.Status != 201 || retry.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("retry: %d replayed=%q %s", retry.Status, retry.Header.Get("Idempotent-Replayed"), retry.Body)
			}
			var counts struct {
				Refunds   int   `db:"refunds"`
				Succeeded int   `db:"succeeded"`
				Given     int   `db:"given"`
				Refunded  int64 `db:"refunded"`
				Events    int   `db:"events"`
			}
			if err := db.Get(&counts, `SELECT
					(SELECT count(*) FROM refunds WHERE payment_id = $1) AS refunds,
					(SELECT count(*) FROM refunds WHERE payment_id = $1 AND status = 'succeeded') AS succeeded,
					(SELECT count(*) FROM sandbox_refunds WHERE idempotency_key IN (SELECT id FROM refunds WHERE payment_id = $1)) AS given,
					(SELECT amount_refunded FROM payments WHERE id = $1) AS refunded,
					(SELECT count(*) FROM events WHERE type = 'charge.refunded' AND merchant_id = $2) AS events`,
				s.Payment.Id, o.ID); err != nil {
				t.Fatal(err)
			}
			if counts.Refunds != 1 || counts.Succeeded != 1 || counts.Given != 1 || counts.Refunded != 1000 || counts.Events != 1 {
				t.Fatalf("after the retry: %+v, want one refund given back once, 1000 refunded, one charge.refunded", counts)
			}
			wantReplay(t, retry, <-refundSend(o, second.DashboardURL, session, s.Payment.Id, key, body))
		})
	}
}

// A refund without a key killed (SIGKILL) after the processor gave the money back is applied
// by the background sweep of a new server once it is older than the grace, exactly once: the
// processor is asked by the refund's key and gives nothing back a second time.
func TestRefundCrashResolvedBySweep(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "D16", "a refund killed (SIGKILL) after the processor gave the money back is applied once by the sweep", func(t *testing.T) {
		t.Parallel()
		first, db := idemLone(t, "refund-sweep", map[string]string{"KASSA_SWEEP_INTERVAL": "1s"})
		o := newDashOwnerAt(t, first)
		s := csCreate(t, o.Test, sessionBody())
		if r, err := inflightPay(t, first, s.ClientSecret).ConfirmBuyerSessionWithResponse(context.Background(), s.Id,
			payCard(payCardOK)); err != nil || r.StatusCode() != 200 {
			t.Fatalf("pay: %v", err)
		}
		s = csGet(t, o.Test, s.Id)
		session := o.sessionTokenAt(t, first)
		pause := phasePause(t, db, "refunds", "UPDATE", "NEW.status = 'succeeded'")
		pending := refundSend(o, first.DashboardURL, session, s.Payment.Id, "", `{"amount":1000}`)
		phaseWaitPaused(t, db)
		phaseKill(t, first, db, pause, "refunds")
		if r, ok := <-pending; ok {
			t.Fatalf("the killed server answered: %d %s", r.Status, r.Body)
		}
		second, err := first.Sibling(context.Background(), "refund-sweep-2", harness.Options{Env: map[string]string{"KASSA_SWEEP_INTERVAL": "1s"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		deadline := time.Now().Add(90 * time.Second)
		for {
			var refunded int64
			if err := db.Get(&refunded, `SELECT amount_refunded FROM payments WHERE id = $1`, s.Payment.Id); err != nil {
				t.Fatal(err)
			}
			if refunded == 1000 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pending refund was not applied within 90 s (refunded %d)", refunded)
			}
			time.Sleep(500 * time.Millisecond)
		}
		time.Sleep(2 * time.Second) // a few more sweeps: none may apply it again
		var counts struct {
			Succeeded int   `db:"succeeded"`
			Given     int   `db:"given"`
			Refunded  int64 `db:"refunded"`
			Events    int   `db:"events"`
		}
		if err := db.Get(&counts, `SELECT
				(SELECT count(*) FROM refunds WHERE payment_id = $1 AND status = 'succeeded') AS succeeded,
				(SELECT count(*) FROM sandbox_refunds WHERE merchant_id = $2) AS given,
				(SELECT amount_refunded FROM payments WHERE id = $1) AS refunded,
				(SELECT count(*) FROM events WHERE type = 'charge.refunded' AND merchant_id = $2) AS events`,
			s.Payment.Id, o.ID); err != nil {
			t.Fatal(err)
		}
		if counts.Succeeded != 1 || counts.Given != 1 || counts.Refunded != 1000 || counts.Events != 1 {
			t.Fatalf("after the sweep: %+v, want one refund given back once, 1000 refunded, one charge.refunded", counts)
		}
	})
}
