package checkout

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// fakeProcessor answers by card number (or IBAN), records every call, and remembers its
// answers by idempotency key for Lookup.
type fakeProcessor struct {
	mu      sync.Mutex
	keys    []string // idempotency keys of Charge calls, in order
	actions int
	// failNext fails the next Charge before it charges (Lookup then knows nothing of it).
	failNext error
	// loseNext charges, remembers, and then fails the next Charge (the answer is lost).
	loseNext error
	answers  map[string]ports.ChargeResult
}

func (p *fakeProcessor) Charge(_ context.Context, req ports.ChargeRequest, now time.Time) (ports.ChargeResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.failNext; err != nil {
		p.failNext = nil
		return ports.ChargeResult{}, err
	}
	if res, ok := p.answers[req.IdempotencyKey]; ok {
		return res, nil
	}
	p.keys = append(p.keys, req.IdempotencyKey)
	res := p.answer(req, now)
	if p.answers == nil {
		p.answers = map[string]ports.ChargeResult{}
	}
	p.answers[req.IdempotencyKey] = res
	if err := p.loseNext; err != nil {
		p.loseNext = nil
		return ports.ChargeResult{}, err
	}
	return res, nil
}

func (p *fakeProcessor) answer(req ports.ChargeRequest, now time.Time) ports.ChargeResult {
	ref := "ref_" + req.IdempotencyKey
	if req.SEPA != nil {
		at := now.Add(2 * time.Minute)
		return ports.ChargeResult{Outcome: ports.OutcomeProcessing, ProcessorRef: ref, SEPA: &ports.SEPAInfo{Country: "DE", Last4: "3000"}, SettlesAt: &at}
	}
	country := "DE"
	if strings.HasPrefix(req.Card.Number, "4000000840") {
		country = "US"
	}
	card := &ports.CardInfo{Brand: "visa", Last4: core.Last4(req.Card.Number), Country: country, Funding: "credit", ExpMonth: 12, ExpYear: 2030}
	switch req.Card.Number {
	case "4000000000000002":
		return ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: ref, Card: card, DeclineCode: ports.DeclineGenericDecline, FailureMessage: "Your card was declined."}
	case "4000002760003184":
		return ports.ChargeResult{Outcome: ports.OutcomeRequiresAction, ProcessorRef: ref, Card: card, Action: &ports.ChargeAction{Kind: ports.ActionThreeDSecure}}
	case "4000000000000077":
		return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: ref, Card: card, FundsAvailableNow: true}
	}
	return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: ref, Card: card}
}

func (p *fakeProcessor) Lookup(_ context.Context, _ core.Scope, key string, _ time.Time) (ports.ChargeResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if res, ok := p.answers[key]; ok {
		return res, nil
	}
	return ports.ChargeResult{}, ports.ErrChargeUnknown
}

func (p *fakeProcessor) CompleteAction(_ context.Context, ref string, approve bool, _ time.Time) (ports.ChargeResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.actions++
	if !approve {
		return ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: ref, DeclineCode: ports.DeclineAuthenticationFailed}, nil
	}
	return ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: ref}, nil
}

func (p *fakeProcessor) Settle(context.Context, string, time.Time) (ports.ChargeResult, error) {
	return ports.ChargeResult{}, ports.ErrChargeNotSettleable
}

func (p *fakeProcessor) charges() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.keys...)
}

type fakeMerchants map[string]BuyerMerchant

func (f fakeMerchants) BuyerMerchant(_ context.Context, id string) (BuyerMerchant, error) {
	if m, ok := f[id]; ok {
		return m, nil
	}
	return BuyerMerchant{}, core.NotFound("merchant", "id", id)
}

var acmeBooks = BuyerMerchant{Name: "Acme Books", Onboarded: true}

func newBuyerService(t *testing.T) (*Service, *memStore, *fakeClocks, *fakeProcessor) {
	t.Helper()
	svc, store, clocks, proc := newServiceWith(t, fakeMerchants{testScope.MerchantID: acmeBooks}, 0)
	store.setMerchant(testScope.MerchantID, acmeBooks)
	return svc, store, clocks, proc
}

func cardInput(number string) ConfirmInput {
	return ConfirmInput{Method: ports.MethodCard, Card: &ports.CardDetails{Number: number, ExpMonth: 12, ExpYear: 2030, CVC: "123"}}
}

func TestBuyerViewAuthorisesOnlyTheSecretOfTheSession(t *testing.T) {
	t.Parallel()
	svc, store, clocks, _ := newBuyerService(t)
	a, b := mustCreate(t, svc, testScope), mustCreate(t, svc, testScope)
	v, err := svc.BuyerView(context.Background(), a.ID(), a.ClientSecret())
	if err != nil || v.Session.ID() != a.ID() || v.MerchantName != "Acme Books" || v.Pending != nil {
		t.Fatalf("view = %+v, %v", v, err)
	}
	for name, c := range map[string][2]string{
		"wrong secret":          {a.ID(), a.ClientSecret() + "x"},
		"other session secret":  {a.ID(), b.ClientSecret()},
		"unknown id":            {"cs_unknown", a.ClientSecret()},
		"empty secret":          {a.ID(), ""},
		"empty id":              {"", a.ClientSecret()},
		"secret prefix only":    {a.ID(), a.ClientSecret()[:10]},
		"id of b with secret a": {b.ID(), a.ClientSecret()},
	} {
		if _, err := svc.BuyerView(context.Background(), c[0], c[1]); !errors.Is(err, ErrSessionExpired) {
			t.Errorf("%s: %v, want ErrSessionExpired", name, err)
		}
	}
	// Lazy expiry: the buyer who comes too late expires the session, with one event.
	clocks.set(t0.Add(Lifetime))
	for range 2 {
		if _, err := svc.BuyerView(context.Background(), a.ID(), a.ClientSecret()); !errors.Is(err, ErrSessionExpired) {
			t.Fatalf("due session: %v", err)
		}
	}
	if n := store.eventCount(EventExpired); n != 1 {
		t.Fatalf("%d expired events, want 1", n)
	}
}

func TestConfirmValidatesBeforeCharging(t *testing.T) {
	t.Parallel()
	svc, _, _, proc := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	card := func(f func(*ports.CardDetails)) ConfirmInput {
		in := cardInput("4242424242424242")
		f(in.Card)
		return in
	}
	for _, tc := range []struct {
		name  string
		in    ConfirmInput
		code  string
		param string
	}{
		{"no method", ConfirmInput{}, core.CodeParameterMissing, "payment_method"},
		{"unknown method", ConfirmInput{Method: "klarna"}, "payment_method_invalid", "payment_method"},
		{"card missing", ConfirmInput{Method: ports.MethodCard}, core.CodeParameterMissing, "card"},
		{"luhn", card(func(c *ports.CardDetails) { c.Number = "4242424242424241" }), "number_invalid", "card.number"},
		{"short", card(func(c *ports.CardDetails) { c.Number = "4242" }), "number_invalid", "card.number"},
		{"month", card(func(c *ports.CardDetails) { c.ExpMonth = 13 }), "exp_month_invalid", "card.exp_month"},
		{"year", card(func(c *ports.CardDetails) { c.ExpYear = 123 }), "exp_year_invalid", "card.exp_year"},
		{"far year", card(func(c *ports.CardDetails) { c.ExpYear = 2090 }), "exp_year_invalid", "card.exp_year"},
		{"expired", card(func(c *ports.CardDetails) { c.ExpMonth, c.ExpYear = 2, 2026 }), "card_expired", "card.exp_year"},
		{"cvc missing", card(func(c *ports.CardDetails) { c.CVC = "" }), core.CodeParameterMissing, "card.cvc"},
		{"cvc short", card(func(c *ports.CardDetails) { c.CVC = "12" }), "cvc_invalid", "card.cvc"},
		{"amex cvc", card(func(c *ports.CardDetails) { c.Number, c.CVC = "378282246310005", "123" }), "cvc_invalid", "card.cvc"},
		{"both sources", ConfirmInput{Method: ports.MethodCard, Card: cardInput("4242424242424242").Card, SEPA: &ports.SEPADetails{}}, core.CodeParameterUnknown, "sepa_debit"},
		{"sepa missing", ConfirmInput{Method: ports.MethodSEPADebit}, core.CodeParameterMissing, "sepa_debit"},
		{"iban", ConfirmInput{Method: ports.MethodSEPADebit, SEPA: &ports.SEPADetails{IBAN: "DE89370400440532013001", AccountHolder: "A B"}}, "iban_invalid", "sepa_debit.iban"},
		{"holder", ConfirmInput{Method: ports.MethodSEPADebit, SEPA: &ports.SEPADetails{IBAN: "DE89370400440532013000"}}, core.CodeParameterMissing, "sepa_debit.account_holder"},
	} {
		_, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), tc.in)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Type != core.TypeInvalidRequest || ce.Code != tc.code || ce.Param != tc.param {
			t.Errorf("%s: %v, want invalid_request/%s at %s", tc.name, err, tc.code, tc.param)
		}
	}
	if n := len(proc.charges()); n != 0 {
		t.Fatalf("%d charges for invalid input", n)
	}
}

func TestConfirmSucceedsOnceAndInvalidatesTheSecret(t *testing.T) {
	t.Parallel()
	svc, store, _, proc := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	res, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4242424242424242"))
	if err != nil || res.Status != ConfirmSucceeded || res.Session.Status() != StatusComplete || res.Session.Payment() == nil {
		t.Fatalf("confirm = %+v, %v", res, err)
	}
	if _, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4242424242424242")); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("second confirm: %v, want ErrSessionExpired", err)
	}
	if keys := proc.charges(); len(keys) != 1 || keys[0] != s.ID()+":1" {
		t.Fatalf("charges = %v", keys)
	}
	if len(store.records()) != 1 || store.eventCount(EventCompleted) != 1 || store.eventCount(payments.EventPaymentIntentSucceeded) != 1 {
		t.Fatalf("payments %d, completed %d", len(store.records()), store.eventCount(EventCompleted))
	}
}

func TestConcurrentConfirmsChargeOnce(t *testing.T) {
	t.Parallel()
	svc, store, _, proc := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4242424242424242"))
			if err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			} else if !errors.Is(err, ErrSessionExpired) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || len(proc.charges()) != 1 || len(store.records()) != 1 || store.eventCount(EventCompleted) != 1 {
		t.Fatalf("ok %d, charges %d, payments %d, completed %d", ok, len(proc.charges()), len(store.records()), store.eventCount(EventCompleted))
	}
}

func TestConfirmDeclineKeepsTheSessionOpenAndGuardsAgainstCardTesting(t *testing.T) {
	t.Parallel()
	svc, store, _, proc := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	for i := 1; i <= MaxDeclines; i++ {
		_, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4000000000000002"))
		var de *DeclineError
		if !errors.As(err, &de) || de.DeclineCode != ports.DeclineGenericDecline {
			t.Fatalf("decline %d: %v", i, err)
		}
	}
	got, _ := store.Get(context.Background(), testScope, s.ID())
	if got.Status() != StatusOpen || got.Buyer().Declines != MaxDeclines || got.Buyer().Attempts != MaxDeclines {
		t.Fatalf("after declines: %s %+v", got.Status(), got.Buyer())
	}
	if store.eventCount(payments.EventPaymentIntentPaymentFailed) != MaxDeclines {
		t.Fatalf("%d payment_failed events", store.eventCount(payments.EventPaymentIntentPaymentFailed))
	}
	if _, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4242424242424242")); !errors.Is(err, ErrConfirmLimit) {
		t.Fatalf("after %d declines: %v, want ErrConfirmLimit", MaxDeclines, err)
	}
	keys := proc.charges()
	if len(keys) != MaxDeclines || keys[0] != s.ID()+":1" || keys[9] != s.ID()+":10" {
		t.Fatalf("idempotency keys = %v", keys)
	}
}

// A processor call that fails before anything was charged: the processor is asked for the
// attempt's key at once, knows nothing of it, and the attempt is abandoned, so the session is
// free at once and the buyer's retry is a new attempt (and one charge).
func TestConfirmProcessorErrorAbandonsTheAttempt(t *testing.T) {
	t.Parallel()
	svc, store, _, proc := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	proc.failNext = errors.New("network down")
	if _, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4242424242424242")); err == nil {
		t.Fatal("confirm succeeded through a processor error")
	}
	got, _ := store.Get(context.Background(), testScope, s.ID())
	if got.Buyer().Attempts != 1 || got.Buyer().Charging != "" || got.Status() != StatusOpen {
		t.Fatalf("after a failed call: %+v %s", got.Buyer(), got.Status())
	}
	if a := store.attempt(s.ID() + ":1"); a.Status != payments.AttemptAbandoned {
		t.Fatalf("attempt 1: %+v", a)
	}
	if _, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4242424242424242")); err != nil {
		t.Fatal(err)
	}
	if keys := proc.charges(); len(keys) != 1 || keys[0] != s.ID()+":2" {
		t.Fatalf("charges %v, want one with attempt 2", keys)
	}
}

// A processor call whose answer is lost after the charge: the processor is asked for the
// attempt's key at once and the charge it made is applied (one payment, no second charge).
func TestConfirmLostAnswerIsLookedUp(t *testing.T) {
	t.Parallel()
	svc, store, _, proc := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	proc.loseNext = errors.New("connection reset")
	res, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4242424242424242"))
	if err != nil || res.Status != ConfirmSucceeded || res.Session.Status() != StatusComplete {
		t.Fatalf("confirm = %+v, %v", res, err)
	}
	if keys := proc.charges(); len(keys) != 1 || len(store.records()) != 1 || store.eventCount(EventCompleted) != 1 {
		t.Fatalf("charges %v, %d payments", keys, len(store.records()))
	}
}

func TestThreeDSecureApproveAndRefuse(t *testing.T) {
	t.Parallel()
	svc, store, _, _ := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	if _, err := svc.ResolveAction(context.Background(), s.ID(), s.ClientSecret(), true); !errors.Is(err, ErrNoPendingAction) {
		t.Fatalf("resolve without pending: %v", err)
	}
	res, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4000002760003184"))
	if err != nil || res.Status != ConfirmRequiresAction || res.Action == nil || res.Action.Kind != ports.ActionThreeDSecure {
		t.Fatalf("confirm 3DS = %+v, %v", res, err)
	}
	if store.eventCount(payments.EventPaymentIntentRequiresAction) != 1 {
		t.Fatal("no requires_action event")
	}
	v, err := svc.BuyerView(context.Background(), s.ID(), s.ClientSecret())
	if err != nil || v.Pending == nil {
		t.Fatalf("view while pending: %+v %v", v, err)
	}
	_, err = svc.ResolveAction(context.Background(), s.ID(), s.ClientSecret(), false)
	var de *DeclineError
	if !errors.As(err, &de) || de.DeclineCode != ports.DeclineAuthenticationFailed {
		t.Fatalf("refuse: %v", err)
	}
	if v, _ := svc.BuyerView(context.Background(), s.ID(), s.ClientSecret()); v.Pending != nil {
		t.Fatal("pending kept after a refused challenge")
	}
	// Again, approved this time: the card info of the pending charge reaches the payment.
	if _, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), cardInput("4000002760003184")); err != nil {
		t.Fatal(err)
	}
	res, err = svc.ResolveAction(context.Background(), s.ID(), s.ClientSecret(), true)
	if err != nil || res.Status != ConfirmSucceeded || res.Session.Status() != StatusComplete {
		t.Fatalf("approve = %+v, %v", res, err)
	}
	if c := res.Session.Payment().Card(); c == nil || c.Last4 != "3184" {
		t.Fatalf("payment card = %+v", c)
	}
	if store.eventCount(EventCompleted) != 1 {
		t.Fatal("no completed event")
	}
}

func TestConfirmSEPAProcessing(t *testing.T) {
	t.Parallel()
	svc, store, _, _ := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	res, err := svc.Confirm(context.Background(), s.ID(), s.ClientSecret(), ConfirmInput{Method: ports.MethodSEPADebit,
		SEPA: &ports.SEPADetails{IBAN: "DE89 3704 0044 0532 0130 00", AccountHolder: "Ada Lovelace"}})
	if err != nil || res.Status != ConfirmProcessing || res.Session.Status() != StatusComplete {
		t.Fatalf("confirm SEPA = %+v, %v", res, err)
	}
	if p := res.Session.Payment(); p.Status() != payments.StatusProcessing {
		t.Fatalf("payment status %s", p.Status())
	}
	// D6 as amended: completed once at confirmation (payment_status processing), then
	// async_payment_pending; the outcome event follows at settlement (payments' sweep).
	if len(store.events()) != 2 || store.events()[0].Type != EventCompleted || store.events()[1].Type != EventAsyncPaymentPending {
		t.Fatalf("events %+v", store.events())
	}
	if store.records()[0].AvailableAt() != nil {
		t.Fatalf("a processing payment has funds available at %v", store.records()[0].AvailableAt())
	}
}

func TestLiveWithoutProcessorIsRefused(t *testing.T) {
	t.Parallel()
	live := core.Scope{MerchantID: testScope.MerchantID, Env: core.EnvLive}
	notReady := core.Scope{MerchantID: "mer_" + strings.Repeat("b", 24), Env: core.EnvLive}
	merchants := fakeMerchants{
		live.MerchantID:     {Name: "Ready", Onboarded: true},
		notReady.MerchantID: {Name: "Not ready"},
	}
	svc, store, _, _ := newServiceWith(t, merchants, 0)
	for id, m := range merchants { // the buyer's use cases read them with the session
		store.setMerchant(id, m)
	}
	a := mustCreateLive(t, svc, store, live)
	b := mustCreateLive(t, svc, store, notReady)
	if _, err := svc.Confirm(context.Background(), a.ID(), a.ClientSecret(), cardInput("4242424242424242")); !errors.Is(err, ErrProcessorUnavailable) {
		t.Fatalf("onboarded live: %v", err)
	}
	if _, err := svc.Confirm(context.Background(), b.ID(), b.ClientSecret(), cardInput("4242424242424242")); !errors.Is(err, core.ErrMerchantNotReady) {
		t.Fatalf("not onboarded live: %v", err)
	}
}

// mustCreateLive stores an open session of scope directly (Create refuses live callers that
// are not onboarded, which this test needs to have a session of).
func mustCreateLive(t *testing.T, svc *Service, store *memStore, scope core.Scope) *Session {
	t.Helper()
	s := newSession(scope, sessionFields{mode: ModePayment, amount: 1000, currency: "EUR", customerName: "Ada", customerEmail: "ada@example.com"}, t0, svc.checkoutBase)
	if err := store.Insert(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCancelByBuyer(t *testing.T) {
	t.Parallel()
	svc, store, _, _ := newBuyerService(t)
	s := mustCreate(t, svc, testScope)
	got, err := svc.CancelByBuyer(context.Background(), s.ID(), s.ClientSecret())
	if err != nil || got.Status() != StatusCanceled || *got.CancellationReason() != CancellationCustomerCanceled {
		t.Fatalf("cancel = %v, %v", got, err)
	}
	if _, err := svc.CancelByBuyer(context.Background(), s.ID(), s.ClientSecret()); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("second cancel: %v", err)
	}
	if store.eventCount(EventCanceled) != 1 {
		t.Fatal("canceled event count")
	}
}

// noMerchants fails the test when called: the buyer's view, confirmation and 3-D Secure
// answer carry the merchant read with the session (one query), never a second read.
type noMerchants struct{ t *testing.T }

func (n noMerchants) BuyerMerchant(context.Context, string) (BuyerMerchant, error) {
	n.t.Error("the merchant was read again; it comes with the session (FindByClientSecretHash)")
	return BuyerMerchant{}, errors.New("unexpected merchant read")
}

func TestBuyerAnswersCarryTheMerchantReadWithTheSession(t *testing.T) {
	t.Parallel()
	svc, store, _, _ := newServiceWith(t, noMerchants{t}, 0)
	acme := acmeBooks
	store.setMerchant(testScope.MerchantID, acme)
	ctx := context.Background()

	s := mustCreate(t, svc, testScope)
	if v, err := svc.BuyerView(ctx, s.ID(), s.ClientSecret()); err != nil || v.MerchantName != acme.Name {
		t.Fatalf("view = %+v, %v", v, err)
	}
	res, err := svc.Confirm(ctx, s.ID(), s.ClientSecret(), cardInput("4242424242424242"))
	if err != nil || res.Status != ConfirmSucceeded || res.Merchant != acme {
		t.Fatalf("confirm = %+v, %v; want succeeded with merchant %+v", res, err, acme)
	}

	s = mustCreate(t, svc, testScope)
	res, err = svc.Confirm(ctx, s.ID(), s.ClientSecret(), cardInput("4000002760003184"))
	if err != nil || res.Status != ConfirmRequiresAction || res.Merchant != acme {
		t.Fatalf("3-D Secure confirm = %+v, %v", res, err)
	}
	res, err = svc.ResolveAction(ctx, s.ID(), s.ClientSecret(), true)
	if err != nil || res.Status != ConfirmSucceeded || res.Merchant != acme {
		t.Fatalf("resolve = %+v, %v", res, err)
	}
}

// Refund and LookupRefund: checkout's tests refund nothing.
func (p *fakeProcessor) Refund(context.Context, ports.RefundRequest, time.Time) (ports.RefundResult, error) {
	return ports.RefundResult{}, ports.ErrRefundRequestInvalid
}

func (p *fakeProcessor) LookupRefund(context.Context, core.Scope, string, time.Time) (ports.RefundResult, error) {
	return ports.RefundResult{}, ports.ErrRefundUnknown
}
