package conformance

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// A charge in flight (D6, 422 payment_in_progress). A sandbox charge takes milliseconds, so
// these cases hold one on purpose: the sandbox processor writes its answer to sandbox_charges
// while it is called, after the first transaction of the charge committed the attempt (the
// session shows it in flight), and the case inserts, uncommitted, the row of that very
// attempt's key. The processor's INSERT … ON CONFLICT then waits for the case's transaction:
// the charge stays in flight until the case rolls back, and only that session's charge is
// held, so the cases run in parallel on one server of their own (they read its database).

// inflightChargeWait is how long a second confirmation waits for the charge in flight before
// it answers 422 payment_in_progress (checkout.yaml, confirm: "after 10 seconds").
const inflightChargeWait = 10 * time.Second

// inflightHold holds the first charge of session id of merchant: the row its processor call
// writes is inserted by a transaction of the case, left open until release.
type inflightHold struct {
	tx  *sqlx.Tx
	pid int // the backend of the holding transaction
	rel sync.Once
}

func inflightHoldCharge(t *testing.T, db *sqlx.DB, merchant, id string) *inflightHold {
	t.Helper()
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	h := &inflightHold{tx: tx}
	t.Cleanup(h.release)
	if err := tx.Get(&h.pid, `SELECT pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	// The first attempt of a session has the processor idempotency key "<session id>:1".
	if _, err := tx.Exec(`INSERT INTO sandbox_charges (merchant_id, environment, idempotency_key, result)
		VALUES ($1, 'test', $2, '{}')`, merchant, id+":1"); err != nil {
		t.Fatal(err)
	}
	return h
}

// release rolls the holding transaction back: the processor's own INSERT goes through.
func (h *inflightHold) release() { h.rel.Do(func() { _ = h.tx.Rollback() }) }

// inflightWaitHeld waits until the charge of session id is held: its attempt committed as
// pending and marked in flight on the session, and the processor's write to sandbox_charges
// waiting for h.
func inflightWaitHeld(t *testing.T, db *sqlx.DB, h *inflightHold, id string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stat_activity
			WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%INSERT INTO sandbox_charges%'`, h.pid); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			var charging sql.NullString
			if err := db.Get(&charging, `SELECT charging_attempt FROM checkout_sessions WHERE id = $1`, id); err != nil {
				t.Fatal(err)
			}
			var pending int
			if err := db.Get(&pending, `SELECT count(*) FROM charge_attempts
				WHERE reference = $1 AND idempotency_key = $2 AND status = 'pending'`, id, id+":1"); err != nil {
				t.Fatal(err)
			}
			if charging.String != id+":1" || pending != 1 {
				t.Fatalf("the processor call waits, but the session's charge in flight is %q with %d pending attempts", charging.String, pending)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the charge never reached the processor's journal")
}

// inflightPay is a browser API client of srv that sends secret as its bearer.
func inflightPay(t *testing.T, srv *harness.Target, secret string) *capi.ClientWithResponses {
	t.Helper()
	c, err := capi.NewClientWithResponses(srv.CheckoutURL, capi.WithHTTPClient(transport.Client()),
		capi.WithRequestEditorFn(capi.RequestEditorFn(bearer(secret))))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// inflightConfirmed is the answer of a confirmation sent in the background, and when it came.
type inflightConfirmed struct {
	resp *capi.ConfirmBuyerSessionResponse
	err  error
	at   time.Time
}

// inflightConfirm confirms s in the background; the answer arrives on the channel.
func inflightConfirm(c *capi.ClientWithResponses, s *api.CheckoutSession, body capi.ConfirmRequest) <-chan inflightConfirmed {
	out := make(chan inflightConfirmed, 1)
	go func() {
		r, err := c.ConfirmBuyerSessionWithResponse(context.Background(), s.Id, body)
		out <- inflightConfirmed{r, err, time.Now()}
	}()
	return out
}

// inflightAnswer waits for a background confirmation and fails unless it answered.
func inflightAnswer(t *testing.T, ch <-chan inflightConfirmed) inflightConfirmed {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the confirmation never answered")
	}
	return inflightConfirmed{}
}

// inflightWantOnePayment asserts that session id completed with exactly one succeeded payment:
// one payment row, one charge attempt (applied), one payment_intent.succeeded and one
// checkout.session.completed.
func inflightWantOnePayment(t *testing.T, db *sqlx.DB, m *Merchant, id string) {
	t.Helper()
	s, p := payPayment(t, m, id)
	if s.Status != "complete" || p == nil || p.Status != "succeeded" {
		t.Fatalf("session %s is %s with payment %+v, want complete with a succeeded payment", id, s.Status, p)
	}
	var payments, attempts int
	if err := db.Get(&payments, `SELECT count(*) FROM payments WHERE session_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&attempts, `SELECT count(*) FROM charge_attempts WHERE reference = $1`, id); err != nil {
		t.Fatal(err)
	}
	var applied bool
	if err := db.Get(&applied, `SELECT bool_and(status = 'applied') FROM charge_attempts WHERE reference = $1`, id); err != nil {
		t.Fatal(err)
	}
	if payments != 1 || attempts != 1 || !applied {
		t.Fatalf("%d payments and %d charge attempts (all applied: %v) for %s, want 1 and 1 applied", payments, attempts, applied, id)
	}
	payWantEvents(t, m, payEventSucceeded, id, 1)
	payWantEvents(t, m, payEventCompleted, id, 1)
}

func TestCheckoutChargeInFlight(t *testing.T) {
	t.Parallel()
	srv, db := idemLone(t, "inflight", nil)

	// start creates a merchant and a session on srv, holds the session's first charge and
	// starts a confirmation with body that stays in flight.
	start := func(t *testing.T, body capi.ConfirmRequest) (*Merchant, *api.CheckoutSession, *inflightHold, <-chan inflightConfirmed) {
		t.Helper()
		m := newDashMerchantAt(t, srv, true).Merchant
		s := paySession(t, m)
		h := inflightHoldCharge(t, db, m.ID, s.Id)
		first := inflightConfirm(inflightPay(t, srv, s.ClientSecret), s, body)
		inflightWaitHeld(t, db, h, s.Id)
		if ms := csGet(t, m.Test, s.Id); ms.Status != "open" || ms.Payment != nil {
			t.Fatalf("a session being charged is %s with payment %v, want open without one", ms.Status, ms.Payment)
		}
		return m, s, h, first
	}

	harness.Rule(t, "D6", "a second confirm, and a 3-D Secure answer, while the charge stays in flight past 10 s are 422 payment_in_progress; the first then succeeds, one payment, one completed event", func(t *testing.T) {
		t.Parallel()
		m, s, h, first := start(t, payCard(payCardOK))
		pay := inflightPay(t, srv, s.ClientSecret)
		// The 3-D Secure answer waits for the charge in flight as a confirmation does
		// (checkout.yaml lists payment_in_progress for both); one wait serves the two.
		type answered struct {
			resp  *capi.ResolveBuyerActionResponse
			err   error
			after time.Duration
		}
		began := time.Now()
		action := make(chan answered, 1)
		go func() {
			r, err := pay.ResolveBuyerActionWithResponse(context.Background(), s.Id, capi.ActionRequest{Approve: true})
			action <- answered{r, err, time.Since(began)}
		}()
		second, err := pay.ConfirmBuyerSessionWithResponse(context.Background(), s.Id, payCard(payCardOK))
		if err != nil {
			t.Fatal(err)
		}
		waited := time.Since(began)
		payWantErr(t, second.HTTPResponse, second.Body, 422, "invalid_state", "payment_in_progress", "")
		a := <-action
		if a.err != nil {
			t.Fatal(a.err)
		}
		payWantErr(t, a.resp.HTTPResponse, a.resp.Body, 422, "invalid_state", "payment_in_progress", "")
		for what, d := range map[string]time.Duration{"the second confirmation": waited, "the 3-D Secure answer": a.after} {
			if d < inflightChargeWait || d > inflightChargeWait+5*time.Second {
				t.Fatalf("%s answered after %v, want about %v", what, d, inflightChargeWait)
			}
			t.Logf("%s: 422 payment_in_progress after %v", what, d.Round(time.Millisecond))
		}
		select {
		case r := <-first:
			t.Fatalf("the held confirmation answered before its release: %+v", r)
		default:
		}
		h.release()
		r := inflightAnswer(t, first)
		if r.resp.JSON200 == nil || r.resp.JSON200.Status != capi.ConfirmResultStatusSucceeded {
			t.Fatalf("the first confirmation after the release: %d %s", r.resp.StatusCode(), r.resp.Body)
		}
		inflightWantOnePayment(t, db, m, s.Id)
	})

	harness.Rule(t, "D6", "a second confirm waits for a charge that ends within 10 s and then answers 422 session_expired; one payment", func(t *testing.T) {
		t.Parallel()
		m, s, h, first := start(t, payCard(payCardOK))
		began := time.Now()
		second := inflightConfirm(inflightPay(t, srv, s.ClientSecret), s, payCard(payCardOK))
		time.Sleep(2 * time.Second) // the second finds the charge in flight and waits for it
		select {
		case r := <-second:
			t.Fatalf("the second confirmation did not wait for the charge in flight: %+v", r)
		default:
		}
		released := time.Now()
		h.release()
		f := inflightAnswer(t, first)
		if f.resp.JSON200 == nil || f.resp.JSON200.Status != capi.ConfirmResultStatusSucceeded {
			t.Fatalf("the first confirmation after the release: %d %s", f.resp.StatusCode(), f.resp.Body)
		}
		r := inflightAnswer(t, second)
		payWantErr(t, r.resp.HTTPResponse, r.resp.Body, 422, "invalid_state", "session_expired", "")
		if r.at.Before(released) || r.at.Sub(began) >= inflightChargeWait {
			t.Fatalf("the second confirmation answered %v after it was sent, %v after the release; want after the release and within %v",
				r.at.Sub(began), r.at.Sub(released), inflightChargeWait)
		}
		inflightWantOnePayment(t, db, m, s.Id)
	})

	harness.Rule(t, "D6", "expire while the buyer's charge is in flight is 422 payment_in_progress; the charge then completes the session, no expired event", func(t *testing.T) {
		t.Parallel()
		m, s, h, first := start(t, payCard(payCardOK))
		key := idemKey()
		keyed, err := m.Test.ExpireCheckoutSessionWithResponse(context.Background(), s.Id, &api.ExpireCheckoutSessionParams{IdempotencyKey: &key})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, keyed, keyed.HTTPResponse, keyed.Body, 422, "invalid_state", "payment_in_progress", "")
		plain := csExpire(t, m.Test, s.Id)
		wantErr(t, plain, plain.HTTPResponse, plain.Body, 422, "invalid_state", "payment_in_progress", "")
		if ms := csGet(t, m.Test, s.Id); ms.Status != "open" {
			t.Fatalf("the session is %s after the refused expire, want open", ms.Status)
		}
		h.release()
		r := inflightAnswer(t, first)
		if r.resp.JSON200 == nil || r.resp.JSON200.Status != capi.ConfirmResultStatusSucceeded {
			t.Fatalf("the confirmation after the release: %d %s", r.resp.StatusCode(), r.resp.Body)
		}
		inflightWantOnePayment(t, db, m, s.Id)
		payWantEvents(t, m, csExpiredEvent, s.Id, 0)
		again := csExpire(t, m.Test, s.Id)
		wantErr(t, again, again.HTTPResponse, again.Body, 422, "invalid_state", "session_already_completed", "")
		// D4: a 4xx the endpoint produced is stored with its key and replayed for 24 h, so the
		// same key keeps answering payment_in_progress after the charge ended (the body verbatim,
		// its request_id that of the first request).
		replay, err := m.Test.ExpireCheckoutSessionWithResponse(context.Background(), s.Id, &api.ExpireCheckoutSessionParams{IdempotencyKey: &key})
		if err != nil {
			t.Fatal(err)
		}
		wantReplay(t, Raw{keyed.StatusCode(), keyed.HTTPResponse.Header, keyed.Body}, Raw{replay.StatusCode(), replay.HTTPResponse.Header, replay.Body})
		payWantEvents(t, m, csExpiredEvent, s.Id, 0)
	})

	harness.Rule(t, "D6", "the buyer's cancel while a charge is in flight is 422 payment_in_progress; a decline leaves the session open and cancel then works", func(t *testing.T) {
		t.Parallel()
		m, s, h, first := start(t, payCard(payCardDecline))
		pay := inflightPay(t, srv, s.ClientSecret)
		x, err := pay.CancelBuyerSessionWithResponse(context.Background(), s.Id)
		if err != nil {
			t.Fatal(err)
		}
		payWantErr(t, x.HTTPResponse, x.Body, 422, "invalid_state", "payment_in_progress", "")
		if ms := csGet(t, m.Test, s.Id); ms.Status != "open" {
			t.Fatalf("the session is %s after the refused cancel, want open", ms.Status)
		}
		payWantEvents(t, m, payEventCanceled, s.Id, 0)
		h.release()
		r := inflightAnswer(t, first)
		payWantDecline(t, r.resp.HTTPResponse, r.resp.Body, "generic_decline")
		x, err = pay.CancelBuyerSessionWithResponse(context.Background(), s.Id)
		if err != nil {
			t.Fatal(err)
		}
		if x.JSON200 == nil || x.JSON200.Session.Status != "canceled" || x.JSON200.Session.CancellationReason == nil ||
			*x.JSON200.Session.CancellationReason != "customer_canceled" {
			t.Fatalf("cancel after the decline: %d %s", x.StatusCode(), x.Body)
		}
		payWantEvents(t, m, payEventCanceled, s.Id, 1)
		payWantEvents(t, m, payEventFailed, s.Id, 1)
		var payments int
		if err := db.Get(&payments, `SELECT count(*) FROM payments WHERE session_id = $1`, s.Id); err != nil {
			t.Fatal(err)
		}
		if payments != 0 {
			t.Fatalf("%d payments for a declined session, want 0", payments)
		}
	})
}
