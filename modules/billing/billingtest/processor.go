package billingtest

// The processor contract of billing: the behaviour every processor adapter shows when it
// saves payment methods and charges them off-session (ports.MethodSaver): written once and
// run on each adapter, the sandbox today (adapters/sandbox), a live adapter when there is one.
// It uses the processors' common test numbers (4242424242424242, 4000000000000341,
// 4000002760003184, 4000000000000002) and the common test IBAN DE89370400440532013000.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// ProcessorHarness is one processor under test.
type ProcessorHarness struct {
	Processor interface {
		ports.Processor
		ports.MethodSaver
	}
	// Scope is a test scope of a merchant no other case uses.
	Scope core.Scope
	// Now is the processor's time of the case's first call; later calls move it forward.
	Now time.Time
	// Settle is how long after Now a processing (SEPA) charge may settle.
	Settle time.Duration
}

// RunMethodSaver runs the suite; newHarness is called once per case, and the cases run in
// parallel.
func RunMethodSaver(t *testing.T, newHarness func(t *testing.T) ProcessorHarness) {
	cases := []struct {
		name string
		run  func(t *testing.T, h ProcessorHarness)
	}{
		{"a saved card charges off-session", savedCardCharges},
		{"a setup keeps no card number", setupKeepsNoNumber},
		{"a card that saves but declines every later charge", attachOnlyCard},
		{"a saved card past its expiry declines expired_card", expiredSavedCard},
		{"a saved SEPA account renews through processing", savedSEPA},
		{"a declined setup saves nothing", declinedSetup},
		{"3-D Secure at setup, then authentication_required off-session", threeDSSetup},
		{"a retried setup answers the same and can be looked up", retriedSetup},
		{"the customer reference is kept", customerKept},
		{"no call inside a transaction", insideTransaction},
		{"detach", detach},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

var keySeq atomic.Int64

// key is a fresh idempotency key.
func key(name string) string {
	return fmt.Sprintf("%s:%d:%d", name, time.Now().UnixNano(), keySeq.Add(1))
}

func setupCard(h ProcessorHarness, number string, expMonth, expYear int) ports.SetupRequest {
	return ports.SetupRequest{Scope: h.Scope, Reference: "in_contract", IdempotencyKey: key("setup"),
		Customer: ports.SetupCustomer{ID: "cus_contract", Name: "Ada Lovelace", Email: "ada@example.com"},
		Method:   ports.MethodCard, Card: &ports.CardDetails{Number: number, ExpMonth: expMonth, ExpYear: expYear, CVC: "123", Name: "Ada"}}
}

func setup(t *testing.T, h ProcessorHarness, req ports.SetupRequest, at time.Time) ports.SetupResult {
	t.Helper()
	res, err := h.Processor.SetupPaymentMethod(ctx, req, at)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	return res
}

func offSession(h ProcessorHarness, req ports.SetupRequest, ref string, amount int64) ports.ChargeRequest {
	return ports.ChargeRequest{Scope: h.Scope, Reference: "in_renewal", Amount: amount, Currency: "EUR",
		Method: req.Method, PaymentMethodRef: ref, OffSession: true, IdempotencyKey: key("renewal")}
}

func charge(t *testing.T, h ProcessorHarness, req ports.ChargeRequest, at time.Time) ports.ChargeResult {
	t.Helper()
	res, err := h.Processor.Charge(ctx, req, at)
	if err != nil {
		t.Fatalf("charge: %v", err)
	}
	return res
}

func savedCardCharges(t *testing.T, h ProcessorHarness) {
	req := setupCard(h, "4242424242424242", 12, h.Now.Year()+3)
	res := setup(t, h, req, h.Now)
	if res.Outcome != ports.OutcomeSucceeded || res.PaymentMethodRef == "" || res.ProcessorRef == "" {
		t.Fatalf("setup: %+v", res)
	}
	if c := res.Card; c == nil || c.Last4 != "4242" || c.Brand != core.BrandVisa || c.ExpMonth != 12 || c.ExpYear != h.Now.Year()+3 || c.Country == "" || c.Funding == "" {
		t.Fatalf("card info: %+v", res.Card)
	}
	// Charged again and again, a month apart, with nobody present.
	for i := 1; i <= 3; i++ {
		ch := charge(t, h, offSession(h, req, res.PaymentMethodRef, 900), h.Now.AddDate(0, i, 0))
		if ch.Outcome != ports.OutcomeSucceeded || ch.ProcessorRef == "" || ch.Card == nil || ch.Card.Last4 != "4242" {
			t.Fatalf("renewal %d: %+v", i, ch)
		}
	}
}

func setupKeepsNoNumber(t *testing.T, h ProcessorHarness) {
	const number = "4242424242424242"
	res := setup(t, h, setupCard(h, number, 12, h.Now.Year()+1), h.Now)
	js, _ := json.Marshal(res)
	all := fmt.Sprintf("%+v %#v %s %s %s %s", res, res, js, res.ProcessorRef, res.PaymentMethodRef, res.CustomerRef)
	if strings.Contains(all, number[:12]) || strings.Contains(all, "123") && strings.Contains(all, "cvc") {
		t.Fatalf("the setup result carries the number: %s", all)
	}
}

func attachOnlyCard(t *testing.T, h ProcessorHarness) {
	req := setupCard(h, "4000000000000341", 12, h.Now.Year()+2)
	res := setup(t, h, req, h.Now)
	if res.Outcome != ports.OutcomeSucceeded || res.PaymentMethodRef == "" {
		t.Fatalf("setup: %+v", res)
	}
	for i := 1; i <= 2; i++ {
		ch := charge(t, h, offSession(h, req, res.PaymentMethodRef, 900), h.Now.AddDate(0, i, 0))
		if ch.Outcome != ports.OutcomeFailed || ch.DeclineCode != ports.DeclineGenericDecline || ch.FailureMessage == "" {
			t.Fatalf("charge %d of 4000000000000341: %+v, want failed generic_decline", i, ch)
		}
	}
}

func expiredSavedCard(t *testing.T, h ProcessorHarness) {
	// Valid to the end of next month; charged two months later.
	exp := h.Now.AddDate(0, 1, 0)
	req := setupCard(h, "4242424242424242", int(exp.Month()), exp.Year())
	res := setup(t, h, req, h.Now)
	if res.Outcome != ports.OutcomeSucceeded {
		t.Fatalf("setup: %+v", res)
	}
	if ch := charge(t, h, offSession(h, req, res.PaymentMethodRef, 900), h.Now.AddDate(0, 0, 20)); ch.Outcome != ports.OutcomeSucceeded {
		t.Fatalf("before the expiry: %+v", ch)
	}
	later := time.Date(exp.Year(), exp.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 1)
	ch := charge(t, h, offSession(h, req, res.PaymentMethodRef, 900), later)
	if ch.Outcome != ports.OutcomeFailed || ch.DeclineCode != ports.DeclineExpiredCard {
		t.Fatalf("after the expiry: %+v, want failed expired_card", ch)
	}
}

func savedSEPA(t *testing.T, h ProcessorHarness) {
	req := ports.SetupRequest{Scope: h.Scope, Reference: "in_contract", IdempotencyKey: key("setup"),
		Customer: ports.SetupCustomer{ID: "cus_contract", Name: "Ada Lovelace", Email: "ada@example.com"},
		Method:   ports.MethodSEPADebit, SEPA: &ports.SEPADetails{IBAN: "DE89370400440532013000", AccountHolder: "Ada Lovelace"}}
	res := setup(t, h, req, h.Now)
	if res.Outcome != ports.OutcomeSucceeded || res.PaymentMethodRef == "" || res.SEPA == nil || res.SEPA.Last4 != "3000" || res.SEPA.Country != "DE" {
		t.Fatalf("setup: %+v", res)
	}
	at := h.Now.AddDate(0, 1, 0)
	ch := charge(t, h, offSession(h, req, res.PaymentMethodRef, 900), at)
	if ch.Outcome != ports.OutcomeProcessing || ch.SettlesAt == nil {
		t.Fatalf("renewal by SEPA: %+v, want processing", ch)
	}
	st, err := h.Processor.Settle(ctx, ch.ProcessorRef, at.Add(h.Settle))
	if err != nil || st.Outcome != ports.OutcomeSucceeded {
		t.Fatalf("settled: %+v %v", st, err)
	}
}

func declinedSetup(t *testing.T, h ProcessorHarness) {
	res := setup(t, h, setupCard(h, "4000000000000002", 12, h.Now.Year()+1), h.Now)
	if res.Outcome != ports.OutcomeFailed || res.DeclineCode != ports.DeclineGenericDecline || res.PaymentMethodRef != "" || res.FailureMessage == "" {
		t.Fatalf("declined setup: %+v", res)
	}
}

func threeDSSetup(t *testing.T, h ProcessorHarness) {
	req := setupCard(h, "4000002760003184", 12, h.Now.Year()+1)
	res := setup(t, h, req, h.Now)
	if res.Outcome != ports.OutcomeRequiresAction || res.Action == nil || res.PaymentMethodRef != "" {
		t.Fatalf("setup of a 3-D Secure card: %+v", res)
	}
	done, err := h.Processor.CompleteAction(ctx, res.ProcessorRef, true, h.Now.Add(time.Minute))
	if err != nil || done.Outcome != ports.OutcomeSucceeded || done.PaymentMethodRef == "" {
		t.Fatalf("approved: %+v %v", done, err)
	}
	ch := charge(t, h, offSession(h, req, done.PaymentMethodRef, 900), h.Now.AddDate(0, 1, 0))
	if ch.Outcome != ports.OutcomeFailed || ch.DeclineCode != ports.DeclineAuthenticationRequired {
		t.Fatalf("off-session charge of a 3-D Secure card: %+v, want authentication_required", ch)
	}
}

func retriedSetup(t *testing.T, h ProcessorHarness) {
	req := setupCard(h, "4242424242424242", 12, h.Now.Year()+1)
	first := setup(t, h, req, h.Now)
	again := setup(t, h, req, h.Now.Add(time.Second))
	if again.ProcessorRef != first.ProcessorRef || again.PaymentMethodRef != first.PaymentMethodRef || again.Outcome != first.Outcome {
		t.Fatalf("retried setup: %+v, first %+v", again, first)
	}
	got, err := h.Processor.LookupSetup(ctx, h.Scope, req.IdempotencyKey, h.Now.Add(time.Minute))
	if err != nil || got.ProcessorRef != first.ProcessorRef || got.PaymentMethodRef != first.PaymentMethodRef {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	if _, err := h.Processor.LookupSetup(ctx, h.Scope, key("never"), h.Now); !errors.Is(err, ports.ErrSetupUnknown) {
		t.Fatalf("lookup of a key never sent: %v, want ErrSetupUnknown", err)
	}
	other := core.Scope{MerchantID: h.Scope.MerchantID + "_other", Env: h.Scope.Env}
	if _, err := h.Processor.LookupSetup(ctx, other, req.IdempotencyKey, h.Now); !errors.Is(err, ports.ErrSetupUnknown) {
		t.Fatalf("lookup in another scope: %v, want ErrSetupUnknown", err)
	}
}

func customerKept(t *testing.T, h ProcessorHarness) {
	first := setup(t, h, setupCard(h, "4242424242424242", 12, h.Now.Year()+1), h.Now)
	if first.CustomerRef == "" {
		t.Fatalf("no customer reference: %+v", first)
	}
	req := setupCard(h, "4242424242424242", 11, h.Now.Year()+2)
	req.Customer.ProcessorRef = first.CustomerRef
	if second := setup(t, h, req, h.Now); second.CustomerRef != first.CustomerRef {
		t.Fatalf("second setup of the customer: %q, want %q", second.CustomerRef, first.CustomerRef)
	}
}

func insideTransaction(t *testing.T, h ProcessorHarness) {
	in := ports.WithinTransaction(ctx)
	if _, err := h.Processor.SetupPaymentMethod(in, setupCard(h, "4242424242424242", 12, h.Now.Year()+1), h.Now); !errors.Is(err, ports.ErrInsideTransaction) {
		t.Errorf("SetupPaymentMethod: %v", err)
	}
	if _, err := h.Processor.LookupSetup(in, h.Scope, "k", h.Now); !errors.Is(err, ports.ErrInsideTransaction) {
		t.Errorf("LookupSetup: %v", err)
	}
	if err := h.Processor.DetachPaymentMethod(in, h.Scope, "x", h.Now); !errors.Is(err, ports.ErrInsideTransaction) {
		t.Errorf("DetachPaymentMethod: %v", err)
	}
}

func detach(t *testing.T, h ProcessorHarness) {
	res := setup(t, h, setupCard(h, "4242424242424242", 12, h.Now.Year()+1), h.Now)
	for i := 0; i < 2; i++ {
		if err := h.Processor.DetachPaymentMethod(ctx, h.Scope, res.PaymentMethodRef, h.Now); err != nil {
			t.Fatalf("detach %d: %v", i, err)
		}
	}
}
