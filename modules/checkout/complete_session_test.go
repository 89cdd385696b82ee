package checkout

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

func newPaymentsService(t *testing.T) (*Service, *memStore, *fakeClocks) {
	t.Helper()
	svc, store, clocks := newTestService(t)
	// EUR charges need no FX rate, so no rate source is wired.
	svc.EnablePayments(payments.NewFeeCalculator(payments.DefaultFeeSchedule(), nil))
	return svc, store, clocks
}

func cardSucceeded(country string) CompletionInput {
	return CompletionInput{Method: ports.MethodCard, Outcome: ports.OutcomeSucceeded, ProcessorRef: "sbx_ref_1",
		Card: &ports.CardInfo{Brand: "visa", Last4: "4242", Country: country, Funding: "credit", ExpMonth: 12, ExpYear: 2030}}
}

func sepaProcessing() CompletionInput {
	at := t0.Add(48 * time.Hour)
	return CompletionInput{Method: ports.MethodSEPADebit, Outcome: ports.OutcomeProcessing, ProcessorRef: "sbx_ref_2",
		SEPA: &ports.SEPAInfo{Country: "DE", Last4: "3000"}, SettlesAt: &at}
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
			err := s.Complete(testPayment(t, s), tc.at)
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
	if err := a.Complete(testPayment(t, b), t0); err == nil || a.Status() != StatusOpen {
		t.Fatalf("completed with another session's payment: %v", err)
	}
	if err := a.Complete(nil, t0); err == nil {
		t.Fatal("completed without a payment")
	}
}

func TestCompleteCardSucceeded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		country string
		fee     int64 // 1000 EUR cents: EEA 1.8% + 25, non-EEA 2.8% + 25
	}{{"DE", 43}, {"us", 53}} {
		svc, store, _ := newPaymentsService(t)
		s := mustCreate(t, svc, testScope)
		got, err := svc.Complete(context.Background(), testScope, s.ID(), cardSucceeded(tc.country))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status() != StatusComplete {
			t.Fatalf("status %s", got.Status())
		}
		p := got.Payment()
		if p == nil || p.Status() != payments.StatusSucceeded || *p.SessionID() != s.ID() || p.Amount() != 1000 {
			t.Fatalf("payment %+v", p)
		}
		if p.Fee().ServiceFeeEUR != tc.fee || p.Fee().ServiceFeeChargeCurrency != tc.fee || p.Fee().Currency != "EUR" {
			t.Errorf("%s: fee %+v, want %d", tc.country, p.Fee(), tc.fee)
		}
		if p.Customer().Email != "ada@example.com" || p.Card().Last4 != "4242" {
			t.Errorf("payment %+v", p.Snapshot())
		}
		if len(store.payments) != 1 || store.payments[0].ProcessorRef != "sbx_ref_1" || store.payments[0].CardExpYear != 2030 {
			t.Fatalf("stored %+v", store.payments)
		}
		// The payment succeeded as it was created: its receipt is queued with it.
		if m := store.payments[0].Mail; len(m) != 1 ||
			m[0] != (core.Mail{Kind: payments.MailReceipt, Scope: testScope, SubjectID: p.ID(), Created: t0}) {
			t.Errorf("mail %+v", m)
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
		for _, ev := range store.events {
			if !ev.Created.Equal(t0) || ev.Scope != testScope {
				t.Errorf("event %s at %v in %v", ev.Type, ev.Created, ev.Scope)
			}
		}
		// Second completion, expire and cancel are refused; nothing more is written.
		if _, err := svc.Complete(context.Background(), testScope, s.ID(), cardSucceeded("DE")); !errors.Is(err, ErrSessionAlreadyCompleted) {
			t.Fatalf("second complete: %v", err)
		}
		if _, err := svc.Cancel(context.Background(), testScope, s.ID()); !errors.Is(err, ErrSessionAlreadyCompleted) {
			t.Fatalf("cancel after complete: %v", err)
		}
		if len(store.payments) != 1 || len(store.events) != 2 {
			t.Fatalf("%d payments, %d events", len(store.payments), len(store.events))
		}
	}
}

func TestCompleteSEPAProcessing(t *testing.T) {
	t.Parallel()
	svc, store, _ := newPaymentsService(t)
	s := mustCreate(t, svc, testScope)
	got, err := svc.Complete(context.Background(), testScope, s.ID(), sepaProcessing())
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != StatusComplete || got.Payment().Status() != payments.StatusProcessing || got.Payment().Card() != nil {
		t.Fatalf("session %s payment %+v", got.Status(), got.Payment().Snapshot())
	}
	if f := got.Payment().Fee(); f.ServiceFeeEUR != 35 {
		t.Errorf("SEPA fee %+v", f)
	}
	if len(store.events) != 1 || store.events[0].Type != EventAsyncPaymentPending || store.eventCount(EventCompleted) != 0 {
		t.Fatalf("events %+v", store.events)
	}
	rec := store.payments[0]
	if rec.SEPALast4 != "3000" || rec.SEPACountry != "DE" || rec.SettlesAt == nil || !rec.SettlesAt.Equal(t0.Add(48*time.Hour)) {
		t.Fatalf("record %+v", rec)
	}
	if rec.Mail != nil { // its receipt goes when it settles
		t.Errorf("mail %+v", rec.Mail)
	}
}

func TestCompleteRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("due session is expired, never completed", func(t *testing.T) {
		svc, store, clocks := newPaymentsService(t)
		s := mustCreate(t, svc, testScope)
		clocks.set(t0.Add(Lifetime))
		if _, err := svc.Complete(ctx, testScope, s.ID(), cardSucceeded("DE")); !errors.Is(err, ErrSessionExpired) {
			t.Fatalf("want session_expired, got %v", err)
		}
		if len(store.payments) != 0 || store.eventCount(EventExpired) != 1 || len(store.events) != 1 {
			t.Fatalf("%d payments, events %+v", len(store.payments), store.events)
		}
		if got, _ := svc.Get(ctx, testScope, s.ID()); got.Status() != StatusExpired {
			t.Fatalf("status %s", got.Status())
		}
	})
	t.Run("expired and canceled", func(t *testing.T) {
		for _, st := range []Status{StatusExpired, StatusCanceled} {
			svc, store, _ := newPaymentsService(t)
			s := mustCreate(t, svc, testScope)
			store.forceStatus(s.ID(), st)
			if _, err := svc.Complete(ctx, testScope, s.ID(), cardSucceeded("DE")); !errors.Is(err, ErrSessionExpired) {
				t.Fatalf("%s: %v", st, err)
			}
			if len(store.payments)+len(store.events) != 0 {
				t.Fatalf("%s: wrote something", st)
			}
		}
	})
	t.Run("bad input", func(t *testing.T) {
		svc, store, _ := newPaymentsService(t)
		s := mustCreate(t, svc, testScope)
		bad := []CompletionInput{
			{Method: ports.MethodCard, Outcome: ports.OutcomeFailed, ProcessorRef: "r", Card: cardSucceeded("DE").Card},
			{Method: ports.MethodCard, Outcome: ports.OutcomeRequiresAction, ProcessorRef: "r", Card: cardSucceeded("DE").Card},
			{Method: ports.MethodCard, Outcome: ports.OutcomeSucceeded, ProcessorRef: "r"},
			{Method: ports.MethodSEPADebit, Outcome: ports.OutcomeProcessing, ProcessorRef: "r", SEPA: &ports.SEPAInfo{Country: "DE", Last4: "3000"}},
			{Method: ports.MethodCard, Outcome: ports.OutcomeSucceeded, Card: cardSucceeded("DE").Card},
		}
		for i, in := range bad {
			if _, err := svc.Complete(ctx, testScope, s.ID(), in); err == nil {
				t.Errorf("input %d accepted", i)
			}
		}
		if len(store.payments)+len(store.events) != 0 {
			t.Fatal("bad input wrote something")
		}
	})
	t.Run("failed payment insert leaves the session open", func(t *testing.T) {
		svc, store, _ := newPaymentsService(t)
		s := mustCreate(t, svc, testScope)
		store.failPaymentInsert = true
		if _, err := svc.Complete(ctx, testScope, s.ID(), cardSucceeded("DE")); err == nil {
			t.Fatal("no error")
		}
		if got, _ := svc.Get(ctx, testScope, s.ID()); got.Status() != StatusOpen || len(store.events) != 0 {
			t.Fatalf("status %s, %d events", got.Status(), len(store.events))
		}
	})
	t.Run("not wired", func(t *testing.T) {
		svc, _, _ := newTestService(t)
		s := mustCreate(t, svc, testScope)
		if _, err := svc.Complete(ctx, testScope, s.ID(), cardSucceeded("DE")); err == nil {
			t.Fatal("completed without a fee calculator")
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		svc, _, _ := newPaymentsService(t)
		if _, err := svc.Complete(ctx, testScope, "cs_unknown", cardSucceeded("DE")); !errors.Is(err, core.NotFound("session", "", "")) {
			t.Fatalf("%v", err)
		}
	})
}

func TestCompleteConcurrentExactlyOnce(t *testing.T) {
	t.Parallel()
	svc, store, _ := newPaymentsService(t)
	s := mustCreate(t, svc, testScope)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = svc.Complete(context.Background(), testScope, s.ID(), cardSucceeded("DE"))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrSessionAlreadyCompleted):
			t.Errorf("loser: %v", err)
		}
	}
	if won != 1 || len(store.payments) != 1 || store.eventCount(EventCompleted) != 1 ||
		store.eventCount(payments.EventPaymentIntentSucceeded) != 1 {
		t.Fatalf("%d winners, %d payments, %d completed events", won, len(store.payments), store.eventCount(EventCompleted))
	}
}

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

func TestRecordDecline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, store, _ := newPaymentsService(t)
	s := mustCreate(t, svc, testScope)
	in := DeclineInput{Method: ports.MethodCard, DeclineCode: ports.DeclineInsufficientFunds,
		FailureMessage: "Your card has insufficient funds.", Card: cardSucceeded("DE").Card}
	if err := svc.RecordDecline(ctx, testScope, s.ID(), in); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Get(ctx, testScope, s.ID()); got.Status() != StatusOpen {
		t.Fatalf("decline changed the session: %s", got.Status())
	}
	if len(store.events) != 1 || store.events[0].Type != payments.EventPaymentIntentPaymentFailed || len(store.payments) != 0 {
		t.Fatalf("events %+v", store.events)
	}
	want := ChargeDeclined{SessionID: s.ID(), Amount: s.Amount(), Currency: s.Currency(), Method: ports.MethodCard,
		FailureCode: FailureCardDeclined, DeclineCode: ports.DeclineInsufficientFunds, FailureMessage: in.FailureMessage,
		Card: in.Card, At: t0}
	if got := store.events[0].Subject; got != want || store.events[0].ObjectID != "" {
		t.Errorf("subject %+v, want %+v", got, want)
	}
	// The buyer retries and succeeds.
	if _, err := svc.Complete(ctx, testScope, s.ID(), cardSucceeded("DE")); err != nil {
		t.Fatal(err)
	}
	if err := svc.RecordDecline(ctx, testScope, "cs_unknown", in); !errors.Is(err, core.NotFound("session", "", "")) {
		t.Fatalf("unknown session: %v", err)
	}
	if err := svc.RecordDecline(ctx, testScope, s.ID(), DeclineInput{Method: ports.MethodCard}); err == nil {
		t.Fatal("decline without a code accepted")
	}
}
