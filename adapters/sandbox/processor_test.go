package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

var (
	scope = core.Scope{MerchantID: "mer_test", Env: core.EnvTest}
	t0    = time.Date(2026, time.March, 15, 12, 0, 0, 0, time.UTC)
	ctx   = context.Background()
)

func cardReq(number string, mutate ...func(*ports.ChargeRequest)) ports.ChargeRequest {
	r := ports.ChargeRequest{Scope: scope, Reference: "cs_1", Amount: 2500, Currency: "EUR",
		Method: ports.MethodCard, Card: &ports.CardDetails{Number: number, ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Ada"}}
	for _, m := range mutate {
		m(&r)
	}
	return r
}

func sepaReq(iban string, mutate ...func(*ports.ChargeRequest)) ports.ChargeRequest {
	r := ports.ChargeRequest{Scope: scope, Reference: "cs_1", Amount: 2500, Currency: "EUR",
		Method: ports.MethodSEPADebit, SEPA: &ports.SEPADetails{IBAN: iban, AccountHolder: "Ada"}}
	for _, m := range mutate {
		m(&r)
	}
	return r
}

// assertNoSecrets fails when the result, in any printed or encoded form, carries the number.
func assertNoSecrets(t *testing.T, res ports.ChargeResult, secrets ...string) {
	t.Helper()
	js, _ := json.Marshal(res)
	all := fmt.Sprintf("%+v %#v %s %s %s", res, res, js, res.ProcessorRef, res.PaymentMethodRef)
	if res.Card != nil {
		all += fmt.Sprintf("%+v", *res.Card)
	}
	for _, s := range secrets {
		s = strings.ReplaceAll(s, " ", "")
		if len(s) > 4 && strings.Contains(all, s[:len(s)-4]) {
			t.Fatalf("result carries the number %s: %s", s, all)
		}
	}
}

func TestChargeCards(t *testing.T) {
	type want struct {
		outcome  ports.ChargeOutcome
		decline  string
		brand    string
		country  string
		funding  string
		dispute  bool
		fundsNow bool
		action   bool
	}
	ok := func(brand, country, funding string) want {
		return want{outcome: ports.OutcomeSucceeded, brand: brand, country: country, funding: funding}
	}
	fail := func(code string) want {
		return want{outcome: ports.OutcomeFailed, decline: code, brand: core.BrandVisa, country: "US", funding: FundingCredit}
	}
	cases := []struct {
		name string
		req  ports.ChargeRequest
		want want
	}{
		{"4242 succeeds", cardReq("4242424242424242"), ok(core.BrandVisa, "US", FundingCredit)},
		{"4242 with spaces", cardReq("4242 4242 4242 4242"), ok(core.BrandVisa, "US", FundingCredit)},
		{"0002 generic_decline", cardReq("4000000000000002"), fail(ports.DeclineGenericDecline)},
		{"9995 insufficient_funds", cardReq("4000000000009995"), fail(ports.DeclineInsufficientFunds)},
		{"9987 lost_card", cardReq("4000000000009987"), fail(ports.DeclineLostCard)},
		{"0069 expired_card", cardReq("4000000000000069"), fail(ports.DeclineExpiredCard)},
		{"0127 incorrect_cvc", cardReq("4000000000000127"), fail(ports.DeclineIncorrectCVC)},
		{"3184 requires 3-D Secure, DE", cardReq("4000002760003184"),
			want{outcome: ports.OutcomeRequiresAction, brand: core.BrandVisa, country: "DE", funding: FundingCredit, action: true}},
		{"3184 off-session authentication_required", cardReq("4000002760003184", func(r *ports.ChargeRequest) { r.OffSession = true }),
			want{outcome: ports.OutcomeFailed, decline: ports.DeclineAuthenticationRequired, brand: core.BrandVisa, country: "DE", funding: FundingCredit}},
		{"0259 succeeds then disputed", cardReq("4000000000000259"),
			want{outcome: ports.OutcomeSucceeded, brand: core.BrandVisa, country: "US", funding: FundingCredit, dispute: true}},
		{"0077 funds available now", cardReq("4000000000000077"),
			want{outcome: ports.OutcomeSucceeded, brand: core.BrandVisa, country: "US", funding: FundingCredit, fundsNow: true}},
		{"0341 charge fails", cardReq("4000000000000341"), fail(ports.DeclineGenericDecline)},
		{"other Luhn-valid mastercard", cardReq("5555555555554444"), ok(core.BrandMastercard, "US", FundingCredit)},
		{"amex with 4-digit CVC", cardReq("378282246310005", func(r *ports.ChargeRequest) { r.Card.CVC = "1234" }), ok(core.BrandAmex, "US", FundingCredit)},
		{"discover", cardReq("6011111111111117"), ok(core.BrandDiscover, "US", FundingCredit)},
		{"DE country card", cardReq("4000002760000016"), ok(core.BrandVisa, "DE", FundingCredit)},
		{"FR country card", cardReq("4000002500000003"), ok(core.BrandVisa, "FR", FundingCredit)},
		{"GB country card", cardReq("4000008260000000"), ok(core.BrandVisa, "GB", FundingCredit)},
		{"visa debit", cardReq("4000056655665556"), ok(core.BrandVisa, "US", FundingDebit)},
		{"mastercard prepaid", cardReq("5105105105105100"), ok(core.BrandMastercard, "US", FundingPrepaid)},
		{"no CVC", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.CVC = "" }), ok(core.BrandVisa, "US", FundingCredit)},
		{"2-digit year", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.ExpYear = 30 }), ok(core.BrandVisa, "US", FundingCredit)},
		{"expiring this month", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.ExpMonth, r.Card.ExpYear = 3, 2026 }), ok(core.BrandVisa, "US", FundingCredit)},
		{"Luhn-invalid", cardReq("4242424242424241"), want{outcome: ports.OutcomeFailed, decline: ports.DeclineIncorrectNumber}},
		{"too short", cardReq("42424242424"), want{outcome: ports.OutcomeFailed, decline: ports.DeclineIncorrectNumber}},
		{"letters", cardReq("4242x42424242424"), want{outcome: ports.OutcomeFailed, decline: ports.DeclineIncorrectNumber}},
		{"expired date", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.ExpMonth, r.Card.ExpYear = 2, 2026 }), fail(ports.DeclineExpiredCard)},
		{"expired date beats special number", cardReq("4000000000000002", func(r *ports.ChargeRequest) { r.Card.ExpYear = 2025 }), fail(ports.DeclineExpiredCard)},
		{"month 13", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.ExpMonth = 13 }), fail(ports.DeclineInvalidExpiryMonth)},
		{"year 300", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.ExpYear = 300 }), fail(ports.DeclineInvalidExpiryYear)},
		{"year far ahead", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.ExpYear = 2099 }), fail(ports.DeclineInvalidExpiryYear)},
		{"CVC too short", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.CVC = "12" }), fail(ports.DeclineInvalidCVC)},
		{"CVC not digits", cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card.CVC = "12a" }), fail(ports.DeclineInvalidCVC)},
		{"amex 3-digit CVC", cardReq("378282246310005", func(r *ports.ChargeRequest) { r.Card.CVC = "123" }),
			want{outcome: ports.OutcomeFailed, decline: ports.DeclineInvalidCVC, brand: core.BrandAmex, country: "US", funding: FundingCredit}},
	}
	p := New()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := p.Charge(ctx, c.req, t0)
			if err != nil {
				t.Fatal(err)
			}
			w := c.want
			if res.Outcome != w.outcome || res.DeclineCode != w.decline {
				t.Fatalf("outcome %s/%q, want %s/%q", res.Outcome, res.DeclineCode, w.outcome, w.decline)
			}
			if w.decline != "" && res.FailureMessage == "" {
				t.Error("a decline needs a message")
			}
			if w.brand == "" {
				if res.Card != nil {
					t.Errorf("unreadable number must give no card info, got %+v", *res.Card)
				}
			} else {
				if res.Card == nil {
					t.Fatal("card info missing")
				}
				number, _ := core.NormalizeCardNumber(c.req.Card.Number)
				got := *res.Card
				if got.Brand != w.brand || got.Country != w.country || got.Funding != w.funding || got.Last4 != number[len(number)-4:] {
					t.Errorf("card info %+v, want %s/%s/%s", got, w.brand, w.country, w.funding)
				}
				if w.outcome != ports.OutcomeFailed && (got.ExpMonth != c.req.Card.ExpMonth || got.ExpYear < 2000) {
					t.Errorf("expiry %d/%d", got.ExpMonth, got.ExpYear)
				}
			}
			if (res.Dispute != nil) != w.dispute {
				t.Errorf("dispute %+v, want %v", res.Dispute, w.dispute)
			} else if w.dispute && (!res.Dispute.OpensAt.Equal(t0.Add(DisputeDelay)) || res.Dispute.Reason != DisputeReason) {
				t.Errorf("dispute %+v, want at now+%s", *res.Dispute, DisputeDelay)
			}
			if res.FundsAvailableNow != w.fundsNow {
				t.Errorf("FundsAvailableNow %v", res.FundsAvailableNow)
			}
			if (res.Action != nil) != w.action || (w.action && res.Action.Kind != ports.ActionThreeDSecure) {
				t.Errorf("action %+v", res.Action)
			}
			if res.SettlesAt != nil || res.SEPA != nil || res.PaymentMethodRef != "" {
				t.Errorf("card charge with SEPA fields or an unrequested saved method: %+v", res)
			}
			if _, err := parseRef(res.ProcessorRef); err != nil || !strings.HasPrefix(res.ProcessorRef, "sbx_ch_card_") {
				t.Errorf("processor ref %q: %v", res.ProcessorRef, err)
			}
			assertNoSecrets(t, res, c.req.Card.Number)
		})
	}
}

func TestCompleteAction(t *testing.T) {
	p := New()
	for _, save := range []bool{false, true} {
		req := cardReq("4000002760003184", func(r *ports.ChargeRequest) { r.SavePaymentMethod = save })
		first, err := p.Charge(ctx, req, t0)
		if err != nil || first.Outcome != ports.OutcomeRequiresAction {
			t.Fatalf("charge: %+v %v", first, err)
		}
		ok, err := p.CompleteAction(ctx, first.ProcessorRef, true, t0.Add(time.Minute))
		if err != nil || ok.Outcome != ports.OutcomeSucceeded || ok.ProcessorRef != first.ProcessorRef {
			t.Fatalf("approve: %+v %v", ok, err)
		}
		if ok.Card == nil || *ok.Card != *first.Card || ok.Card.Country != "DE" {
			t.Errorf("approve card info %+v, want %+v", ok.Card, first.Card)
		}
		if (ok.PaymentMethodRef != "") != save {
			t.Errorf("save=%v: PaymentMethodRef %q", save, ok.PaymentMethodRef)
		}
		no, err := p.CompleteAction(ctx, first.ProcessorRef, false, t0.Add(time.Minute))
		if err != nil || no.Outcome != ports.OutcomeFailed || no.DeclineCode != ports.DeclineAuthenticationFailed ||
			no.ProcessorRef != first.ProcessorRef || no.PaymentMethodRef != "" || no.Card == nil {
			t.Fatalf("reject: %+v %v", no, err)
		}
		assertNoSecrets(t, ok, req.Card.Number)
	}

	notActionable := []ports.ChargeRequest{
		cardReq("4242424242424242"), cardReq("4000000000000002"), cardReq("4242424242424241"),
		cardReq("4000002760003184", func(r *ports.ChargeRequest) { r.OffSession = true }),
		sepaReq("DE89370400440532013000"),
	}
	for _, req := range notActionable {
		res, err := p.Charge(ctx, req, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.CompleteAction(ctx, res.ProcessorRef, true, t0); !errors.Is(err, ports.ErrChargeNotActionable) {
			t.Errorf("CompleteAction(%s) = %v, want ErrChargeNotActionable", res.ProcessorRef, err)
		}
	}
	for _, bad := range []string{"", "ch_123", "sbx_ch_card_3ds", "sbx_xx_card_3ds_0_visa_3184_DE_credit_122030_-_aaaaaaaaaaaaaaaaaaaaaaaa"} {
		if _, err := p.CompleteAction(ctx, bad, true, t0); !errors.Is(err, ports.ErrProcessorRefUnknown) {
			t.Errorf("CompleteAction(%q) = %v, want ErrProcessorRefUnknown", bad, err)
		}
	}
}

func TestChargeSEPAAndSettle(t *testing.T) {
	cases := []struct {
		name, iban string
		final      ports.ChargeOutcome
		decline    string
		country    string
	}{
		{"DE89 settles succeeded", "DE89370400440532013000", ports.OutcomeSucceeded, "", "DE"},
		{"DE62 settles failed", "DE62370400440532013001", ports.OutcomeFailed, ports.DeclineInsufficientFunds, "DE"},
		{"print form", "de89 3704 0044 0532 0130 00", ports.OutcomeSucceeded, "", "DE"},
		{"other valid IBAN", "FR1420041010050500013M02606", ports.OutcomeSucceeded, "", "FR"},
		{"NL IBAN", "NL91ABNA0417164300", ports.OutcomeSucceeded, "", "NL"},
	}
	p := New()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := sepaReq(c.iban)
			now := t0.Add(500 * time.Millisecond) // sub-second parts are dropped
			res, err := p.Charge(ctx, req, now)
			if err != nil {
				t.Fatal(err)
			}
			due := t0.Add(SettleDelay)
			if res.Outcome != ports.OutcomeProcessing || res.SettlesAt == nil || !res.SettlesAt.Equal(due) {
				t.Fatalf("charge: %+v", res)
			}
			iban, _ := core.NormalizeIBAN(c.iban)
			if res.SEPA == nil || res.SEPA.Country != c.country || res.SEPA.Last4 != iban[len(iban)-4:] || res.Card != nil {
				t.Fatalf("SEPA info %+v", res.SEPA)
			}
			early, err := p.Settle(ctx, res.ProcessorRef, due.Add(-time.Second))
			if err != nil || early.Outcome != ports.OutcomeProcessing || !early.SettlesAt.Equal(due) {
				t.Fatalf("settle early: %+v %v", early, err)
			}
			for _, at := range []time.Time{due, due.Add(time.Hour)} { // idempotent
				fin, err := p.Settle(ctx, res.ProcessorRef, at)
				if err != nil || fin.Outcome != c.final || fin.DeclineCode != c.decline || fin.ProcessorRef != res.ProcessorRef {
					t.Fatalf("settle at %s: %+v %v", at, fin, err)
				}
				if fin.SEPA == nil || *fin.SEPA != *res.SEPA || fin.SettlesAt != nil {
					t.Errorf("settled SEPA info %+v", fin)
				}
				if c.decline != "" && fin.FailureMessage == "" {
					t.Error("a failure needs a message")
				}
				// A debit is not a card: its failure speaks of the bank account.
				if c.decline != "" && (strings.Contains(strings.ToLower(fin.FailureMessage), "card") || !strings.Contains(fin.FailureMessage, "bank account")) {
					t.Errorf("a failed debit says %q", fin.FailureMessage)
				}
				assertNoSecrets(t, fin, iban)
			}
			assertNoSecrets(t, res, iban)
		})
	}

	for _, bad := range []string{"DE89370400440532013001", "DE8937040044053201300", "US89370400440532013000", "not an iban"} {
		res, err := p.Charge(ctx, sepaReq(bad), t0)
		if err != nil || res.Outcome != ports.OutcomeFailed || res.DeclineCode != ports.DeclineInvalidIBAN || res.SEPA != nil {
			t.Errorf("invalid IBAN %q: %+v %v", bad, res, err)
		}
		if res.FailureMessage != "The IBAN is invalid." {
			t.Errorf("invalid IBAN %q says %q", bad, res.FailureMessage)
		}
		if _, err := p.Settle(ctx, res.ProcessorRef, t0.Add(time.Hour)); !errors.Is(err, ports.ErrChargeNotSettleable) {
			t.Errorf("Settle of a failed charge: %v", err)
		}
	}
	card, _ := p.Charge(ctx, cardReq("4242424242424242"), t0)
	if _, err := p.Settle(ctx, card.ProcessorRef, t0.Add(time.Hour)); !errors.Is(err, ports.ErrChargeNotSettleable) {
		t.Errorf("Settle of a card charge: %v", err)
	}
	if _, err := p.Settle(ctx, "py_123", t0); !errors.Is(err, ports.ErrProcessorRefUnknown) {
		t.Errorf("Settle of garbage: %v", err)
	}
}

func TestSavedPaymentMethods(t *testing.T) {
	p := New()
	save := func(r *ports.ChargeRequest) { r.SavePaymentMethod = true }
	setup := func(r *ports.ChargeRequest) { r.SavePaymentMethod, r.Amount = true, 0 }
	saved := func(t *testing.T, req ports.ChargeRequest) string {
		t.Helper()
		res, err := p.Charge(ctx, req, t0)
		if err != nil || res.Outcome != ports.OutcomeSucceeded || !strings.HasPrefix(res.PaymentMethodRef, "sbx_pm_") {
			t.Fatalf("saving: %+v %v", res, err)
		}
		if res.Dispute != nil || res.FundsAvailableNow && req.Amount == 0 {
			t.Errorf("a 0-amount setup has no dispute or funds: %+v", res)
		}
		return res.PaymentMethodRef
	}
	renew := func(pm string, method ports.PaymentMethodKind, off bool) ports.ChargeRequest {
		return ports.ChargeRequest{Scope: scope, Reference: "in_1", Amount: 1000, Currency: "EUR", Method: method,
			PaymentMethodRef: pm, OffSession: off}
	}

	t.Run("card renews until it expires", func(t *testing.T) {
		pm := saved(t, cardReq("4242424242424242", save, func(r *ports.ChargeRequest) { r.Card.ExpMonth, r.Card.ExpYear = 4, 2027 }))
		res, err := p.Charge(ctx, renew(pm, ports.MethodCard, true), t0.AddDate(1, 0, 0))
		if err != nil || res.Outcome != ports.OutcomeSucceeded || res.Card == nil || res.Card.Last4 != "4242" ||
			res.Card.ExpMonth != 4 || res.Card.ExpYear != 2027 || res.ProcessorRef == "" {
			t.Fatalf("renewal: %+v %v", res, err)
		}
		res, _ = p.Charge(ctx, renew(pm, ports.MethodCard, true), time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC))
		if res.Outcome != ports.OutcomeFailed || res.DeclineCode != ports.DeclineExpiredCard {
			t.Fatalf("after expiry: %+v", res)
		}
	})
	t.Run("0-amount setup then charge", func(t *testing.T) {
		pm := saved(t, cardReq("4000000000000077", setup))
		res, _ := p.Charge(ctx, renew(pm, ports.MethodCard, true), t0)
		if res.Outcome != ports.OutcomeSucceeded || !res.FundsAvailableNow {
			t.Fatalf("%+v", res)
		}
		pm = saved(t, cardReq("4000000000000259", setup))
		res, _ = p.Charge(ctx, renew(pm, ports.MethodCard, true), t0)
		if res.Outcome != ports.OutcomeSucceeded || res.Dispute == nil {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("0341 saves but charges fail", func(t *testing.T) {
		pm := saved(t, cardReq("4000000000000341", setup))
		res, _ := p.Charge(ctx, renew(pm, ports.MethodCard, true), t0)
		if res.Outcome != ports.OutcomeFailed || res.DeclineCode != ports.DeclineGenericDecline || res.Card.Last4 != "0341" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("3-D Secure card: on-session action, off-session authentication_required", func(t *testing.T) {
		first, _ := p.Charge(ctx, cardReq("4000002760003184", setup), t0)
		done, _ := p.CompleteAction(ctx, first.ProcessorRef, true, t0)
		if done.PaymentMethodRef == "" {
			t.Fatalf("%+v", done)
		}
		res, _ := p.Charge(ctx, renew(done.PaymentMethodRef, ports.MethodCard, false), t0)
		if res.Outcome != ports.OutcomeRequiresAction {
			t.Fatalf("on-session: %+v", res)
		}
		res, _ = p.Charge(ctx, renew(done.PaymentMethodRef, ports.MethodCard, true), t0)
		if res.Outcome != ports.OutcomeFailed || res.DeclineCode != ports.DeclineAuthenticationRequired {
			t.Fatalf("off-session: %+v", res)
		}
	})
	t.Run("declined cards are not saved", func(t *testing.T) {
		res, _ := p.Charge(ctx, cardReq("4000000000000002", setup), t0)
		if res.Outcome != ports.OutcomeFailed || res.PaymentMethodRef != "" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("saving a saved method keeps its ref", func(t *testing.T) {
		pm := saved(t, cardReq("4242424242424242", save))
		req := renew(pm, ports.MethodCard, true)
		req.SavePaymentMethod = true
		res, _ := p.Charge(ctx, req, t0)
		if res.PaymentMethodRef != pm {
			t.Fatalf("%q, want %q", res.PaymentMethodRef, pm)
		}
	})
	t.Run("SEPA mandate then debits", func(t *testing.T) {
		for iban, want := range map[string]ports.ChargeOutcome{
			"DE89370400440532013000": ports.OutcomeSucceeded, "DE62370400440532013001": ports.OutcomeFailed,
		} {
			pm := saved(t, sepaReq(iban, setup))
			res, err := p.Charge(ctx, renew(pm, ports.MethodSEPADebit, true), t0)
			if err != nil || res.Outcome != ports.OutcomeProcessing {
				t.Fatalf("%+v %v", res, err)
			}
			fin, _ := p.Settle(ctx, res.ProcessorRef, *res.SettlesAt)
			if fin.Outcome != want || fin.SEPA.Last4 != iban[len(iban)-4:] {
				t.Fatalf("%s: %+v", iban, fin)
			}
		}
		// A saved method answers after its processing charge settles, when asked.
		res, _ := p.Charge(ctx, sepaReq("DE89370400440532013000", save), t0)
		fin, _ := p.Settle(ctx, res.ProcessorRef, *res.SettlesAt)
		if !strings.HasPrefix(fin.PaymentMethodRef, "sbx_pm_sepa_") {
			t.Fatalf("%+v", fin)
		}
	})
	t.Run("kind mismatch", func(t *testing.T) {
		pm := saved(t, cardReq("4242424242424242", save))
		if _, err := p.Charge(ctx, renew(pm, ports.MethodSEPADebit, true), t0); !errors.Is(err, ports.ErrChargeRequestInvalid) {
			t.Fatalf("%v", err)
		}
		res, _ := p.Charge(ctx, cardReq("4242424242424242"), t0)
		if _, err := p.Charge(ctx, renew(res.ProcessorRef, ports.MethodCard, true), t0); !errors.Is(err, ports.ErrChargeRequestInvalid) {
			t.Fatalf("a charge ref is not a saved method: %v", err)
		}
		if _, err := p.Charge(ctx, renew("pm_nope", ports.MethodCard, true), t0); !errors.Is(err, ports.ErrProcessorRefUnknown) {
			t.Fatalf("%v", err)
		}
	})
}

func TestIdempotentRefs(t *testing.T) {
	p := New()
	key := func(k string) func(*ports.ChargeRequest) {
		return func(r *ports.ChargeRequest) { r.IdempotencyKey = k }
	}
	a, _ := p.Charge(ctx, cardReq("4242424242424242", key("k1")), t0)
	b, _ := p.Charge(ctx, cardReq("4242424242424242", key("k1")), t0)
	c, _ := p.Charge(ctx, cardReq("4242424242424242", key("k2")), t0)
	d, _ := p.Charge(ctx, cardReq("4242424242424242"), t0)
	e, _ := p.Charge(ctx, cardReq("4242424242424242"), t0)
	if a.ProcessorRef != b.ProcessorRef {
		t.Errorf("same key, different refs: %s %s", a.ProcessorRef, b.ProcessorRef)
	}
	if a.ProcessorRef == c.ProcessorRef || d.ProcessorRef == e.ProcessorRef {
		t.Error("different keys, or no key, must give different refs")
	}
	const golden = "sbx_ch_card_ok_0_visa_4242_US_credit_122030_-_"
	if !strings.HasPrefix(a.ProcessorRef, golden) || len(a.ProcessorRef) != len(golden)+nonceLen {
		t.Errorf("ref %q, want %s<nonce>", a.ProcessorRef, golden)
	}
	r, err := parseRef(a.ProcessorRef)
	if err != nil || r.String() != a.ProcessorRef {
		t.Errorf("round trip: %+v %v", r, err)
	}
	s, _ := p.Charge(ctx, sepaReq("DE89370400440532013000", key("k3")), t0)
	if want := fmt.Sprintf("sbx_ch_sepa_ok_0_-_3000_DE_-_-_%d_", t0.Add(SettleDelay).Unix()); !strings.HasPrefix(s.ProcessorRef, want) {
		t.Errorf("ref %q, want prefix %q", s.ProcessorRef, want)
	}
}

// Lookup answers what Charge answered for a key, in its scope only; a key never charged is
// ErrChargeUnknown. A retried Charge answers the first answer even when the clock moved (a
// SEPA debit keeps its settlement time).
func TestLookup(t *testing.T) {
	p := New()
	key := func(k string) func(*ports.ChargeRequest) {
		return func(r *ports.ChargeRequest) { r.IdempotencyKey = k }
	}
	cases := map[string]ports.ChargeRequest{
		"cs_1:1": cardReq("4242424242424242", key("cs_1:1")),
		"cs_1:2": cardReq("4000000000000002", key("cs_1:2")),
		"cs_1:3": cardReq("4000002760003184", key("cs_1:3")),
		"cs_1:4": sepaReq("DE89370400440532013000", key("cs_1:4")),
		"cs_1:5": cardReq("4000000000000077", key("cs_1:5")),
	}
	for k, req := range cases {
		first, err := p.Charge(ctx, req, t0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Lookup(ctx, scope, k, t0.Add(time.Hour))
		if err != nil || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", first) {
			t.Errorf("%s: lookup %+v %v, want %+v", k, got, err, first)
		}
		again, err := p.Charge(ctx, req, t0.Add(time.Hour))
		if err != nil || again.ProcessorRef != first.ProcessorRef || fmt.Sprint(again.SettlesAt) != fmt.Sprint(first.SettlesAt) {
			t.Errorf("%s: retry %+v, want %+v", k, again, first)
		}
	}
	if res, _ := p.Lookup(ctx, scope, "cs_1:5", t0); !res.FundsAvailableNow {
		t.Error("the instant-funds card lost FundsAvailableNow")
	}
	other := core.Scope{MerchantID: "mer_other", Env: core.EnvTest}
	for _, k := range []string{"cs_1:9", ""} {
		if _, err := p.Lookup(ctx, scope, k, t0); !errors.Is(err, ports.ErrChargeUnknown) {
			t.Errorf("%q: %v", k, err)
		}
	}
	if _, err := p.Lookup(ctx, other, "cs_1:1", t0); !errors.Is(err, ports.ErrChargeUnknown) {
		t.Errorf("another scope: %v", err)
	}
	if _, err := (&Processor{}).Lookup(ctx, scope, "cs_1:1", t0); !errors.Is(err, ports.ErrChargeUnknown) {
		t.Errorf("no journal: %v", err)
	}
}

func TestInvalidRequests(t *testing.T) {
	cases := map[string]ports.ChargeRequest{
		"unknown method":     cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Method = "klarna" }),
		"negative amount":    cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Amount = -1 }),
		"zero without save":  cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Amount = 0 }),
		"no source":          cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Card = nil }),
		"two sources":        cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.SEPA = &ports.SEPADetails{IBAN: "x"} }),
		"card as sepa":       cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.Method = ports.MethodSEPADebit }),
		"sepa as card":       sepaReq("DE89370400440532013000", func(r *ports.ChargeRequest) { r.Method = ports.MethodCard }),
		"sepa in USD":        sepaReq("DE89370400440532013000", func(r *ports.ChargeRequest) { r.Currency = "USD" }),
		"card and saved ref": cardReq("4242424242424242", func(r *ports.ChargeRequest) { r.PaymentMethodRef = "sbx_pm_x" }),
	}
	for name, req := range cases {
		if _, err := New().Charge(ctx, req, t0); !errors.Is(err, ports.ErrChargeRequestInvalid) {
			t.Errorf("%s: %v, want ErrChargeRequestInvalid", name, err)
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := New().Charge(canceled, cardReq("4242424242424242"), t0); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}

// TestDetailsNeverPrinted: the buyer's details are redacted in every printed, logged or
// encoded form, however deeply they are nested.
func TestDetailsNeverPrinted(t *testing.T) {
	req := cardReq("4000 0027 6000 3184", func(r *ports.ChargeRequest) { r.Card.CVC = "987" })
	req.SEPA = &ports.SEPADetails{IBAN: "DE89370400440532013000", AccountHolder: "Ada"}
	var logged bytes.Buffer
	// No time attribute: a timestamp's digits could contain the CVC by chance.
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{ReplaceAttr: noTime})).Info("charge", "req", req, "card", req.Card, "sepa", *req.SEPA)
	js, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprintf("%v|%+v|%#v|%s|%v|%+v|%s|%s", req, req, req, req.Card, *req.Card, req.SEPA, js, logged.String())
	for _, secret := range []string{"400000276000", "4000 0027 6000", "987", "DE8937040044053201", "370400440532"} {
		if strings.Contains(all, secret) {
			t.Fatalf("%q printed: %s", secret, all)
		}
	}
	if !strings.Contains(all, "last4=3184") || !strings.Contains(all, "last4=3000") {
		t.Errorf("redacted forms should keep last4: %s", all)
	}
}
