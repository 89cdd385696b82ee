package conformance

import (
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

func init() {
	sectionTitles["3.2"] = "payment states"
	sectionTitles["D9"] = "payment and dispute states"
}

func TestPaymentsAsync(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D6", "SEPA with a good IBAN: checkout.session.completed once at confirmation (payment_status processing), async_payment_succeeded at settlement", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		start := clockFreeze(t, m.Test)
		s := asyncPay(t, m, payIBANOK)
		if s.Status != "complete" || s.Payment == nil || s.Payment.Status != "processing" || s.Payment.PaymentMethod != "sepa_debit" {
			t.Fatalf("after confirmation: session %s, payment %+v", s.Status, s.Payment)
		}
		if s.PaymentStatus == nil || *s.PaymentStatus != "processing" {
			t.Fatalf("payment_status %v, want processing", s.PaymentStatus)
		}
		// D6 as amended: the fulfilment trigger fires once, when the session completes, and
		// says where the money stands; async_payment_pending reports the same moment.
		completed := asyncOne(t, m, "checkout.session.completed", "id", s.Id)
		if completed.Data.Object["payment_status"] != "processing" || asyncEmbedded(t, completed)["status"] != "processing" ||
			completed.Created != start {
			t.Fatalf("checkout.session.completed %v at %d", completed.Data.Object, completed.Created)
		}
		pending := asyncOne(t, m, "checkout.session.async_payment_pending", "id", s.Id)
		if asyncEmbedded(t, pending)["status"] != "processing" {
			t.Fatalf("async_payment_pending payment %v", asyncEmbedded(t, pending))
		}
		// One second before settlement nothing has happened.
		clockAdvance(t, m.Test, asyncSettleDelay-1)
		if p := asyncPayment(t, m, s.Id); p.Status != "processing" {
			t.Fatalf("before settlement: %s", p.Status)
		}
		if evs := asyncEvents(t, m, "checkout.session.async_payment_succeeded", "id", s.Id); len(evs) != 0 {
			t.Fatalf("%d async_payment_succeeded events before settlement", len(evs))
		}
		clockAdvance(t, m.Test, 1)
		p := asyncPayment(t, m, s.Id)
		if p.Status != "succeeded" || p.FailureCode != nil {
			t.Fatalf("after settlement: %+v", p)
		}
		succ := asyncOne(t, m, "payment_intent.succeeded", "id", p.Id)
		if succ.Data.Object["status"] != "succeeded" || succ.Data.Object["object"] != "payment" || succ.Data.Object["session_id"] != s.Id {
			t.Fatalf("payment_intent.succeeded object %v", succ.Data.Object)
		}
		async := asyncOne(t, m, "checkout.session.async_payment_succeeded", "id", s.Id)
		if ep := asyncEmbedded(t, async); ep["status"] != "succeeded" || ep["id"] != p.Id || async.Data.Object["payment_status"] != "paid" {
			t.Fatalf("async_payment_succeeded payment %v, payment_status %v", ep, async.Data.Object["payment_status"])
		}
		if got := csGet(t, m.Test, s.Id); got.PaymentStatus == nil || *got.PaymentStatus != "paid" {
			t.Fatalf("session payment_status after settlement %v", got.PaymentStatus)
		}
		asyncOne(t, m, "checkout.session.completed", "id", s.Id) // still once
		// Confirmed at the frozen time; stamped with the settlement time, not the advance's.
		for _, e := range []api.Event{succ, async} {
			if e.Created != start+asyncSettleDelay {
				t.Errorf("%s created %d, want the settlement time %d", e.Type, e.Created, start+asyncSettleDelay)
			}
		}
		// Further advances change nothing.
		clockAdvance(t, m.Test, 3600)
		asyncOne(t, m, "checkout.session.async_payment_succeeded", "id", s.Id)
		asyncOne(t, m, "payment_intent.succeeded", "id", p.Id)
	})

	harness.Rule(t, "D6", "SEPA with the failing IBAN: completed once at confirmation, then fails at settlement with failure_code and both failure events", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		s := asyncPay(t, m, payIBANFailsLater)
		if s.Payment == nil || s.Payment.Status != "processing" {
			t.Fatalf("after confirmation: %+v", s.Payment)
		}
		clockAdvance(t, m.Test, asyncSettleDelay+5)
		p := asyncPayment(t, m, s.Id)
		if p.Status != "failed" || p.FailureCode == nil || *p.FailureCode != "insufficient_funds" ||
			p.FailureMessage == nil || *p.FailureMessage == "" {
			t.Fatalf("after settlement: %+v", p)
		}
		// A debit speaks of the bank account, never of a card.
		if msg := *p.FailureMessage; strings.Contains(strings.ToLower(msg), "card") || !strings.Contains(msg, "bank account") {
			t.Fatalf("a failed SEPA debit says %q", msg)
		}
		failed := asyncOne(t, m, "payment_intent.payment_failed", "id", p.Id)
		if failed.Data.Object["failure_code"] != "insufficient_funds" || failed.Data.Object["status"] != "failed" {
			t.Fatalf("payment_failed object %v", failed.Data.Object)
		}
		async := asyncOne(t, m, "checkout.session.async_payment_failed", "id", s.Id)
		if ep := asyncEmbedded(t, async); ep["status"] != "failed" || ep["failure_code"] != "insufficient_funds" ||
			async.Data.Object["payment_status"] != "failed" {
			t.Fatalf("async_payment_failed payment %v, payment_status %v", ep, async.Data.Object["payment_status"])
		}
		if c := asyncOne(t, m, "checkout.session.completed", "id", s.Id); c.Data.Object["payment_status"] != "processing" {
			t.Fatalf("completed payment_status %v", c.Data.Object["payment_status"])
		}
		if evs := asyncEvents(t, m, "checkout.session.async_payment_succeeded", "id", s.Id); len(evs) != 0 {
			t.Fatal("a failed debit reported success")
		}
	})

	harness.Rule(t, "D9", "the dispute card succeeds, then is disputed with charge.dispute.created when the clock passes the dispute", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		s := asyncPay(t, m, payCardDispute)
		if s.Payment == nil || s.Payment.Status != "succeeded" {
			t.Fatalf("after confirmation: %+v", s.Payment)
		}
		clockAdvance(t, m.Test, asyncDisputeWait-1)
		if p := asyncPayment(t, m, s.Id); p.Status != "succeeded" {
			t.Fatalf("before the dispute: %s", p.Status)
		}
		c := clockAdvance(t, m.Test, 1)
		p := asyncPayment(t, m, s.Id)
		if p.Status != "disputed" {
			t.Fatalf("after the dispute: %s", p.Status)
		}
		d := asyncOne(t, m, "charge.dispute.created", "payment_id", p.Id).Data.Object
		id, _ := d["id"].(string)
		if !strings.HasPrefix(id, "dp_") || len(id) != 27 || d["object"] != "dispute" || d["amount"] != float64(p.Amount) ||
			d["currency"] != "EUR" || d["reason"] != "fraudulent" || d["status"] != "needs_response" ||
			d["created"] != float64(c.Now) || d["evidence_due_by"] != float64(c.Now+7*86400) {
			t.Fatalf("dispute object %v (clock %d)", d, c.Now)
		}
		// The embedded payment of the session shows the dispute; it opens once.
		clockAdvance(t, m.Test, 86400)
		asyncOne(t, m, "charge.dispute.created", "payment_id", p.Id)
		if s := csGet(t, m.Test, s.Id); s.Payment == nil || s.Payment.Status != "disputed" {
			t.Fatalf("session payment %+v", s.Payment)
		}
	})

	harness.Rule(t, "D12", "one advance settles and disputes in time order, events stamped with their due times", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		start := clockFreeze(t, m.Test)
		sepa := asyncPay(t, m, payIBANOK)
		card := asyncPay(t, m, payCardDispute)
		clockAdvance(t, m.Test, 3600)
		var got []string
		var times []int64
		for _, e := range evtList(t, m.Test, "", 100).Data { // newest first
			switch e.Type {
			case "charge.dispute.created", "payment_intent.succeeded", "checkout.session.async_payment_succeeded":
				if e.Created > start { // the card's own payment_intent.succeeded is at confirmation
					got = append([]string{e.Type}, got...)
					times = append([]int64{e.Created}, times...)
				}
			}
		}
		want := []string{"charge.dispute.created", "payment_intent.succeeded", "checkout.session.async_payment_succeeded"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("events in order %v, want %v", got, want)
		}
		if times[0] != start+asyncDisputeWait || times[1] != start+asyncSettleDelay || times[2] != times[1] {
			t.Fatalf("created %v, want [%d %d %d]", times, start+asyncDisputeWait, start+asyncSettleDelay, start+asyncSettleDelay)
		}
		if asyncPayment(t, m, sepa.Id).Status != "succeeded" || asyncPayment(t, m, card.Id).Status != "disputed" {
			t.Fatal("states after the advance")
		}
	})

	harness.Rule(t, "D12", "one advance interleaves settlement with session expiry in time order", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		start := clockFreeze(t, m.Test)
		open := csCreate(t, m.Test, sessionBody()) // expires at start + 24 h
		paid := asyncPay(t, m, payIBANOK)          // settles at start + 2 min
		clockAdvance(t, m.Test, 25*3600)
		var order []string
		for _, e := range evtList(t, m.Test, "", 100).Data { // newest first
			id, _ := e.Data.Object["id"].(string)
			switch {
			case e.Type == "checkout.session.expired" && id == open.Id:
				order = append(order, "expired")
				if e.Created != open.ExpiresAt {
					t.Errorf("expired created %d, want expires_at %d", e.Created, open.ExpiresAt)
				}
			case e.Type == "checkout.session.async_payment_succeeded" && id == paid.Id:
				order = append(order, "settled")
				if e.Created != start+asyncSettleDelay {
					t.Errorf("settled created %d, want %d", e.Created, start+asyncSettleDelay)
				}
			}
		}
		if strings.Join(order, ",") != "expired,settled" {
			t.Fatalf("newest first: %v, want the expiry (24 h) after the settlement (2 min)", order)
		}
	})

	harness.Rule(t, "ISO", "a merchant's advance settles only its own payments", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		clockFreeze(t, a.Test)
		clockFreeze(t, b.Test)
		sa := asyncPay(t, a, payIBANOK)
		sb := asyncPay(t, b, payIBANOK)
		clockAdvance(t, a.Test, asyncSettleDelay+1)
		if asyncPayment(t, a, sa.Id).Status != "succeeded" || asyncPayment(t, b, sb.Id).Status != "processing" {
			t.Fatal("advancing one merchant's clock settled the other's payment, or not its own")
		}
		if evs := asyncEvents(t, b, "checkout.session.async_payment_succeeded", "id", sb.Id); len(evs) != 0 {
			t.Fatal("events for the other merchant")
		}
	})
}
