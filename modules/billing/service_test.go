package billing_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/billing/billingtest"
	"github.com/kassa-pay/kassa/ports"
)

var (
	ctx   = context.Background()
	t0    = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	scope = core.Scope{MerchantID: "mer_1", Env: core.EnvTest}
)

type fixedClocks struct{ now time.Time }

func (c fixedClocks) Now(context.Context, core.Scope) (time.Time, error) { return c.now, nil }

// stubSaver answers setups by card number, remembering each key's answer as a processor does.
type stubSaver struct {
	calls int
	seen  map[string]ports.SetupResult
	reqs  []ports.SetupRequest
}

func (s *stubSaver) SetupPaymentMethod(ctx context.Context, req ports.SetupRequest, _ time.Time) (ports.SetupResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.SetupResult{}, err
	}
	s.calls++
	s.reqs = append(s.reqs, req)
	if old, ok := s.seen[req.IdempotencyKey]; ok {
		return old, nil
	}
	card := &ports.CardInfo{Brand: "visa", Last4: core.Last4(req.Card.Number), Country: "US", Funding: "credit", ExpMonth: req.Card.ExpMonth, ExpYear: req.Card.ExpYear}
	res := ports.SetupResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: fmt.Sprintf("seti_%d", s.calls), CustomerRef: "pcus_" + req.Customer.ID,
		PaymentMethodRef: fmt.Sprintf("ppm_%d", s.calls), Card: card}
	switch req.Card.Number {
	case "4000000000000002":
		res = ports.SetupResult{Outcome: ports.OutcomeFailed, ProcessorRef: "seti_x", Card: card, DeclineCode: ports.DeclineGenericDecline, FailureMessage: "Your card was declined."}
	case "4000002760003184":
		res = ports.SetupResult{Outcome: ports.OutcomeRequiresAction, ProcessorRef: "seti_3ds", Card: card, Action: &ports.ChargeAction{Kind: ports.ActionThreeDSecure}}
	}
	s.seen[req.IdempotencyKey] = res
	return res, nil
}

func (s *stubSaver) LookupSetup(context.Context, core.Scope, string, time.Time) (ports.SetupResult, error) {
	return ports.SetupResult{}, ports.ErrSetupUnknown
}

func (s *stubSaver) DetachPaymentMethod(context.Context, core.Scope, string, time.Time) error {
	return nil
}

func newService(t *testing.T) (*billing.Service, *billingtest.Fake, *stubSaver) {
	t.Helper()
	f := billingtest.NewFake()
	saver := &stubSaver{seen: map[string]ports.SetupResult{}}
	svc, err := billing.NewService(billing.Deps{Store: f, UoW: f, Clocks: fixedClocks{t0}, Prices: catalog(),
		Savers: map[core.Environment]ports.MethodSaver{core.EnvTest: saver}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, f, saver
}

func cardInput(number, key string) billing.MethodInput {
	return billing.MethodInput{Method: ports.MethodCard, IdempotencyKey: key,
		Card: &ports.CardDetails{Number: number, ExpMonth: 12, ExpYear: 2030, CVC: "123"}}
}

func TestNewServiceNeedsItsDependencies(t *testing.T) {
	if _, err := billing.NewService(billing.Deps{}); err == nil {
		t.Fatal("no error without dependencies")
	}
}

// Customers are found or created by e-mail within the merchant environment; name and e-mail
// are checked at their request fields.
func TestCustomerFoundOrCreatedByEmail(t *testing.T) {
	svc, _, _ := newService(t)
	c, created, err := svc.FindOrCreateCustomer(ctx, scope, "Ada Lovelace", "ada@example.com")
	if err != nil || !created || !strings.HasPrefix(c.ID(), "cus_") {
		t.Fatalf("create: %v %v %v", c, created, err)
	}
	again, created, err := svc.FindOrCreateCustomer(ctx, scope, "Ada L.", "ADA@example.com")
	if err != nil || created || again.ID() != c.ID() {
		t.Fatalf("find: %v %v %v", again, created, err)
	}
	for _, bad := range []struct{ name, email, param string }{
		{"A", "a@example.com", "customer_name"},
		{strings.Repeat("x", 121), "a@example.com", "customer_name"},
		{"", "a@example.com", "customer_name"},
		{"Ada Lovelace", "not-an-email", "customer_email"},
		{"Ada Lovelace", "", "customer_email"},
	} {
		_, _, err := svc.FindOrCreateCustomer(ctx, scope, bad.name, bad.email)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Type != core.TypeInvalidRequest || ce.Param != bad.param {
			t.Errorf("%q %q: %v, want invalid_request at %s", bad.name, bad.email, err, bad.param)
		}
	}
	if _, err := svc.Customer(ctx, core.Scope{MerchantID: "mer_2", Env: core.EnvTest}, c.ID()); !errors.Is(err, billing.ErrCustomerNotFound) {
		t.Fatalf("another merchant's customer: %v", err)
	}
}

// A saved method keeps only what may be stored, becomes the default, and a retried save with
// the same key records one method.
func TestSavePaymentMethodKeepsOnlyWhatMayBeStored(t *testing.T) {
	svc, _, saver := newService(t)
	c, _, _ := svc.FindOrCreateCustomer(ctx, scope, "Ada Lovelace", "ada@example.com")
	out, err := svc.SavePaymentMethod(ctx, scope, c.ID(), cardInput("4242424242424242", "k1"))
	if err != nil || out.Method == nil || out.Outcome != ports.OutcomeSucceeded {
		t.Fatalf("save: %+v %v", out, err)
	}
	s := out.Method.Snapshot()
	if s.Last4 != "4242" || s.Brand != "visa" || s.ExpMonth != 12 || s.ExpYear != 2030 || s.ProcessorRef != "ppm_1" || s.Customer != c.ID() {
		t.Fatalf("method %+v", s)
	}
	if strings.Contains(fmt.Sprintf("%+v", s), "424242424242") {
		t.Fatalf("the method keeps the number: %+v", s)
	}
	if d := out.Customer.DefaultPaymentMethod(); d == nil || *d != out.Method.ID() || out.Customer.ProcessorRef() != "pcus_"+c.ID() {
		t.Fatalf("customer after the save: %+v", out.Customer.Snapshot())
	}
	again, err := svc.SavePaymentMethod(ctx, scope, c.ID(), cardInput("4242424242424242", "k1"))
	if err != nil || again.Method.ID() != out.Method.ID() {
		t.Fatalf("retried save: %+v %v", again, err)
	}
	// The processor's customer is given back on the next setup.
	if _, err := svc.SavePaymentMethod(ctx, scope, c.ID(), cardInput("5555555555554444", "k2")); err != nil {
		t.Fatal(err)
	}
	if got := saver.reqs[len(saver.reqs)-1].Customer.ProcessorRef; got != "pcus_"+c.ID() {
		t.Fatalf("processor customer given back: %q", got)
	}
	ms, err := svc.CustomerMethods(ctx, scope, c.ID())
	if err != nil || len(ms) != 2 {
		t.Fatalf("methods: %v %v", ms, err)
	}
}

func TestSavePaymentMethodRefusals(t *testing.T) {
	svc, f, _ := newService(t)
	c, _, _ := svc.FindOrCreateCustomer(ctx, scope, "Ada Lovelace", "ada@example.com")
	out, err := svc.SavePaymentMethod(ctx, scope, c.ID(), cardInput("4000000000000002", "d1"))
	if err != nil || out.Method != nil || out.Outcome != ports.OutcomeFailed || out.DeclineCode != ports.DeclineGenericDecline {
		t.Fatalf("declined: %+v %v", out, err)
	}
	out, err = svc.SavePaymentMethod(ctx, scope, c.ID(), cardInput("4000002760003184", "a1"))
	if err != nil || out.Method != nil || out.Outcome != ports.OutcomeRequiresAction || out.Action == nil {
		t.Fatalf("3-D Secure: %+v %v", out, err)
	}
	if ms, _ := f.CustomerMethods(ctx, scope, c.ID()); len(ms) != 0 {
		t.Fatalf("a refused method was recorded: %v", ms)
	}
	if _, err := svc.SavePaymentMethod(ctx, scope, "cus_nope", cardInput("4242424242424242", "n1")); !errors.Is(err, billing.ErrCustomerNotFound) {
		t.Fatalf("unknown customer: %v", err)
	}
	live := core.Scope{MerchantID: scope.MerchantID, Env: core.EnvLive}
	if _, err := svc.SavePaymentMethod(ctx, live, c.ID(), cardInput("4242424242424242", "l1")); !errors.Is(err, billing.ErrProcessorUnavailable) {
		t.Fatalf("live without a processor: %v", err)
	}
}
