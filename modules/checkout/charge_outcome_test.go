package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// newPaymentsService wires the charge use case over a fake processor for the test
// environment (no live processor).
func newPaymentsService(t *testing.T) (*Service, *memStore, *fakeClocks, *fakeProcessor) {
	t.Helper()
	svc, store, clocks := newTestService(t)
	proc := &fakeProcessor{}
	// EUR charges need no FX rate, so no rate source is wired.
	ch, err := payments.NewCharger(payments.NewFeeCalculator(payments.DefaultFeeSchedule(), nil),
		map[core.Environment]ports.Processor{core.EnvTest: proc})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.EnablePayments(ch); err != nil {
		t.Fatal(err)
	}
	return svc, store, clocks, proc
}

func testPayment(t *testing.T, s *Session) *payments.Payment {
	t.Helper()
	id := s.ID()
	p, err := payments.NewPayment(payments.NewPaymentParams{Scope: s.Scope(), SessionID: &id, Amount: s.Amount(),
		Currency: s.Currency(), Status: payments.StatusSucceeded, Method: payments.MethodSEPADebit,
		Fee: payments.Fee{Currency: s.Currency()}, Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSessionCompleteAndCancelTransitions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		status  Status
		at      time.Time
		wantErr error
	}{
		{name: "open", status: StatusOpen, at: t0},
		{name: "open just before expiry", status: StatusOpen, at: t0.Add(Lifetime - time.Second)},
		{name: "open but due", status: StatusOpen, at: t0.Add(Lifetime), wantErr: ErrSessionExpired},
		{name: "complete", status: StatusComplete, at: t0, wantErr: ErrSessionAlreadyCompleted},
		{name: "expired", status: StatusExpired, at: t0, wantErr: ErrSessionExpired},
		{name: "canceled", status: StatusCanceled, at: t0, wantErr: ErrSessionExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, _, _ := newTestService(t)
			base := mustCreate(t, svc, testScope).Snapshot()
			base.Status = tc.status

			s := RehydrateSession(base)
			err := s.complete(testPayment(t, s), tc.at)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("complete: want %v, got %v", tc.wantErr, err)
			}
			if err == nil && (s.Status() != StatusComplete || s.Payment() == nil) {
				t.Fatalf("after complete: %s %v", s.Status(), s.Payment())
			}
			if err != nil && (s.Status() != tc.status || s.Payment() != nil) {
				t.Fatalf("a refused complete changed the session: %s", s.Status())
			}

			s = RehydrateSession(base)
			err = s.Cancel(tc.at)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("cancel: want %v, got %v", tc.wantErr, err)
			}
			if err == nil && (s.Status() != StatusCanceled || s.CancellationReason() == nil ||
				*s.CancellationReason() != CancellationCustomerCanceled) {
				t.Fatalf("after cancel: %s %v", s.Status(), s.CancellationReason())
			}
		})
	}
}

func TestSessionCompleteRefusesAForeignPayment(t *testing.T) {
	t.Parallel()
	svc, _, _ := newTestService(t)
	a, b := mustCreate(t, svc, testScope), mustCreate(t, svc, testScope)
	if err := a.complete(testPayment(t, b), t0); err == nil || a.Status() != StatusOpen {
		t.Fatalf("completed with another session's payment: %v", err)
	}
	if err := a.complete(nil, t0); err == nil {
		t.Fatal("completed without a payment")
	}
}

// A confirmed card charge completes the session with its payment: the fee from the plan by the
// card's country, funds available two days later (at once for the instant-funds card), the
// processor facts on the record, and payment_intent.succeeded then checkout.session.completed
// stamped at the charge's time.
func TestConfirmCardCompletesTheSession(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		number string
		fee    int64 // 1000 EUR cents: EEA 1.8% + 25, non-EEA 2.8% + 25
		avail  time.Time
	}{{"4242424242424242", 43, t0.Add(payments.FundsDelay)}, {"4000000840000006", 53, t0.Add(payments.FundsDelay)},
		{"4000000000000077", 43, t0}} {
		svc, store, _, _ := newBuyerService(t)
		s := mustCreate(t, svc, testScope)
		res, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput(tc.number))
		if err != nil {
			t.Fatal(err)
		}
		got := res.Session
		if got.Status() != StatusComplete || res.Status != ConfirmSucceeded {
			t.Fatalf("status %s %s", got.Status(), res.Status)
		}
		p := got.Payment()
		if p == nil || p.Status() != payments.StatusSucceeded || *p.SessionID() != s.ID() || p.Amount() != 1000 {
			t.Fatalf("payment %+v", p)
		}
		if p.Fee().ServiceFeeEUR != tc.fee || p.Fee().ServiceFeeChargeCurrency != tc.fee || p.Fee().Currency != "EUR" || p.Fee().Rate != "1" {
			t.Errorf("%s: fee %+v, want %d", tc.number, p.Fee(), tc.fee)
		}
		if p.Customer().Email != "ada@example.com" || p.Card().Last4 != tc.number[12:] {
			t.Errorf("payment %+v", p.Snapshot())
		}
		rec := store.payments[0]
		if len(store.payments) != 1 || rec.ProcessorRef != "ref_"+s.ID()+":1" || rec.CardExpYear != 2030 ||
			rec.AvailableAt == nil || !rec.AvailableAt.Equal(tc.avail) {
			t.Fatalf("stored %+v", store.payments)
		}
		if len(store.events) != 2 || store.events[0].Type != payments.EventPaymentIntentSucceeded ||
			store.events[1].Type != EventCompleted {
			t.Fatalf("events %+v", store.events)
		}
		if ev, ok := store.events[0].Subject.(payments.PaymentEvent); !ok || ev.Payment.ID() != p.ID() || store.events[0].ObjectID != p.ID() {
			t.Errorf("payment_intent.succeeded subject %+v", store.events[0].Subject)
		}
		if ev, ok := store.events[1].Subject.(SessionEvent); !ok || ev.Session.ID() != s.ID() || ev.Session.Status() != StatusComplete ||
			store.events[1].ObjectID != s.ID() {
			t.Errorf("checkout.session.completed subject %+v", store.events[1].Subject)
		}
		// The payment succeeded as it was created: its receipt is queued with it.
		if m := store.mail; len(m) != 1 || m[0] != (core.Mail{Kind: payments.MailReceipt, Scope: testScope, SubjectID: p.ID(), Created: t0}) {
			t.Errorf("mail %+v", m)
		}
		for _, ev := range store.events {
			if !ev.Created.Equal(t0) || ev.Scope != testScope {
				t.Errorf("event %s at %v in %v", ev.Type, ev.Created, ev.Scope)
			}
		}
		if a := store.attempt(s.ID() + ":1"); a.Status != payments.AttemptApplied || a.Outcome != ports.OutcomeSucceeded {
			t.Errorf("attempt %+v", a)
		}
		// Expire and cancel are refused; nothing more is written.
		if _, err := svc.Cancel(context.Background(), testScope, s.ID()); !errors.Is(err, ErrSessionAlreadyCompleted) {
			t.Fatalf("cancel after complete: %v", err)
		}
		if _, err := svc.Expire(context.Background(), testScope, s.ID()); !errors.Is(err, ErrSessionAlreadyCompleted) {
			t.Fatalf("expire after complete: %v", err)
		}
		if len(store.payments) != 1 || len(store.events) != 2 {
			t.Fatalf("%d payments, %d events", len(store.payments), len(store.events))
		}
	}
}

// While a charge is in flight the session neither expires (sweep, lazy, merchant's expire)
// nor is canceled, nor takes a second charge: the buyer's money may be moving.
func TestAChargeInFlightHoldsTheSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, store, clocks, proc := newBuyerService(t)
	svc.chargeWait = 50 * time.Millisecond
	s := mustCreate(t, svc, testScope)
	store.failPaymentInsert = 1 // the outcome does not commit: the attempt stays in flight
	if _, err := svc.Confirm(ctx, s.ID(), s.ClientSecret(), cardInput("4242424242424242")); err == nil {
		t.Fatal("the outcome's failure was not reported")
	}
	if _, err := svc.Confirm(ctx, s.ID(), s.ClientSecret(), cardInput("4242424242424242")); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("second confirm: %v", err)
	}
	if _, err := svc.Cancel(ctx, testScope, s.ID()); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := svc.Expire(ctx, testScope, s.ID()); !errors.Is(err, payments.ErrChargeInProgress) {
		t.Fatalf("expire: %v", err)
	}
	clocks.set(t0.Add(Lifetime + time.Hour))
	if n, err := svc.ProcessDue(ctx, nil, t0.Add(Lifetime+time.Hour)); err != nil || n != 0 {
		t.Fatalf("expiry sweep: %d %v", n, err)
	}
	if got, _ := store.Get(ctx, testScope, s.ID()); got.Status() != StatusOpen || got.Buyer().Charging != s.ID()+":1" {
		t.Fatalf("session %s %+v", got.Status(), got.Buyer())
	}
	if len(proc.charges()) != 1 || len(store.payments) != 0 || store.eventCount(EventExpired) != 0 {
		t.Fatalf("charges %v, %d payments", proc.charges(), len(store.payments))
	}
}

// The crash-safety test of issue 10 §2: the work dies between "attempt recorded" (and the
// charge made) and "outcome applied". The sweep resolves the attempt by asking the processor
// for its key and applies the outcome exactly once: one payment, one completion event, the
// events stamped at the charge's time; a second sweep, and a late duplicate application, do
// nothing. The session is then complete even though its lifetime ran out meanwhile.
func TestSweepAppliesALostOutcomeExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, method := range []string{"card", "sepa_debit"} {
		svc, store, clocks, proc := newBuyerService(t)
		wall := &fakeWall{t: time.Now()}
		store.wallClock = wall
		s := mustCreate(t, svc, testScope)
		in := cardInput("4242424242424242")
		if method == "sepa_debit" {
			in = ConfirmInput{Method: ports.MethodSEPADebit, SEPA: &ports.SEPADetails{IBAN: "DE89370400440532013000", AccountHolder: "Ada"}}
		}
		store.failPaymentInsert = 1 // the outcome fails to commit (a crash before the commit)
		if _, err := svc.Confirm(ctx, s.ID(), s.ClientSecret(), in); err == nil {
			t.Fatal("no error")
		}
		sw, err := payments.NewAttemptSweeper(store, svc.charger, map[string]payments.OutcomeApplier{core.PrefixSession: svc}, wall)
		if err != nil {
			t.Fatal(err)
		}
		// Within the grace (and whatever the test clock says) nothing is resolved.
		clocks.set(t0.Add(Lifetime + time.Hour))
		if n, err := sw.ProcessDue(ctx, &testScope, t0.Add(Lifetime+time.Hour)); err != nil || n != 0 {
			t.Fatalf("within the grace: %d %v", n, err)
		}
		wall.t = wall.t.Add(payments.AttemptGrace + time.Second)
		if n, err := sw.ProcessDue(ctx, nil, time.Time{}); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		if n, err := sw.ProcessDue(ctx, nil, time.Time{}); err != nil || n != 0 {
			t.Fatalf("second sweep: %d %v", n, err)
		}
		a := payments.RehydrateChargeAttempt(store.attempt(s.ID() + ":1"))
		res, _ := proc.Lookup(ctx, testScope, a.IdempotencyKey(), t0)
		if applied, err := svc.ApplyResolved(ctx, a, res, true); err != nil || applied {
			t.Fatalf("a late second application: %v %v", applied, err)
		}
		got, _ := store.Get(ctx, testScope, s.ID())
		if got.Status() != StatusComplete || got.Buyer().Charging != "" || len(store.payments) != 1 ||
			store.eventCount(EventCompleted) != 1 || len(proc.charges()) != 1 {
			t.Fatalf("%s: session %s %+v, %d payments, %d completed, charges %v", method, got.Status(), got.Buyer(),
				len(store.payments), store.eventCount(EventCompleted), proc.charges())
		}
		for _, ev := range store.events {
			if !ev.Created.Equal(t0) {
				t.Errorf("event %s at %v, want the charge's time", ev.Type, ev.Created)
			}
		}
		if a := store.attempt(s.ID() + ":1"); a.Status != payments.AttemptApplied {
			t.Fatalf("attempt %+v", a)
		}
		// The sweep applies what the confirmation would have: a card's receipt goes with its
		// payment; a processing debit's goes when it settles.
		if m := store.mail; (len(m) == 1) != (method == "card") {
			t.Errorf("%s: mail %+v", method, m)
		}
	}
}

// An attempt the processor never received (the work died before the call) is abandoned by
// the sweep: no payment, no event, and the session is free for the buyer's next attempt.
func TestSweepAbandonsAnAttemptTheProcessorNeverSaw(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, store, _, proc := newBuyerService(t)
	wall := &fakeWall{t: time.Now()}
	store.wallClock = wall
	s := mustCreate(t, svc, testScope)
	a, err := svc.beginCharge(ctx, s, t0, func(ctx context.Context, tx Tx, s *Session) (*payments.ChargeAttempt, error) {
		return svc.charger.Begin(ctx, tx, s, s.nextAttempt(), ports.MethodCard, t0)
	})
	if err != nil {
		t.Fatal(err)
	}
	sw, _ := payments.NewAttemptSweeper(store, svc.charger, map[string]payments.OutcomeApplier{core.PrefixSession: svc}, wall)
	wall.t = wall.t.Add(payments.AttemptGrace + time.Second)
	if n, err := sw.ProcessDue(ctx, nil, time.Time{}); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if got := store.attempt(a.IdempotencyKey()); got.Status != payments.AttemptAbandoned {
		t.Fatalf("attempt %+v", got)
	}
	if len(store.events)+len(store.payments) != 0 {
		t.Fatalf("events %+v", store.events)
	}
	if _, err := svc.Confirm(ctx, s.ID(), s.ClientSecret(), cardInput("4242424242424242")); err != nil {
		t.Fatal(err)
	}
	if keys := proc.charges(); len(keys) != 1 || keys[0] != s.ID()+":2" {
		t.Fatalf("charges %v", keys)
	}
}

type fakeWall struct{ t time.Time }

func (w *fakeWall) Now() time.Time { return w.t }

func TestCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, store, clocks := newTestService(t)
	s := mustCreate(t, svc, testScope)
	got, err := svc.Cancel(ctx, testScope, s.ID())
	if err != nil || got.Status() != StatusCanceled || *got.CancellationReason() != CancellationCustomerCanceled {
		t.Fatalf("%v %v", got, err)
	}
	if store.eventCount(EventCanceled) != 1 {
		t.Fatalf("events %+v", store.events)
	}
	if ev, ok := store.events[0].Subject.(SessionEvent); !ok || ev.Session.Status() != StatusCanceled {
		t.Errorf("subject %+v", store.events[0].Subject)
	}
	if _, err := svc.Cancel(ctx, testScope, s.ID()); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("second cancel: %v", err)
	}
	due := mustCreate(t, svc, testScope)
	clocks.set(t0.Add(Lifetime + time.Minute))
	if _, err := svc.Cancel(ctx, testScope, due.ID()); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("cancel of a due session: %v", err)
	}
	if store.eventCount(EventExpired) != 1 || store.eventCount(EventCanceled) != 1 {
		t.Fatalf("events %+v", store.events)
	}
}
