package payments

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// The fee reversals of a payment's refunds, against figures computed by hand: each part is
// round(part × refunded so far / amount) half-up less what the refunds before reversed, and
// the refund that completes the payment reverses exactly what is left.
func TestFeeReversalFigures(t *testing.T) {
	type step struct {
		amount                   int64
		service, psp, inCurrency int64
	}
	cases := []struct {
		name   string
		amount int64
		fee    Fee
		steps  []step
	}{
		{"EUR 10.00, two halves: a tie rounds up, the second reverses the rest", 1000,
			Fee{ServiceFeeEUR: 25, PSPFeeEUR: 15, ServiceFeeChargeCurrency: 25, Currency: "EUR"},
			[]step{{500, 13, 8, 13}, {500, 12, 7, 12}}},
		{"EUR 25.00 in three", 2500,
			Fee{ServiceFeeEUR: 70, PSPFeeEUR: 40, ServiceFeeChargeCurrency: 70, Currency: "EUR"},
			[]step{{1000, 28, 16, 28}, {1000, 28, 16, 28}, {500, 14, 8, 14}}},
		{"JPY 10000 in thirds (no minor unit)", 10000,
			Fee{ServiceFeeEUR: 190, PSPFeeEUR: 120, ServiceFeeChargeCurrency: 315, Currency: "JPY"},
			[]step{{3333, 63, 40, 105}, {3333, 64, 40, 105}, {3334, 63, 40, 105}}},
		{"USD 100.00 non-EEA card, a quarter then the rest", 10000,
			Fee{ServiceFeeEUR: 266, PSPFeeEUR: 199, ServiceFeeChargeCurrency: 309, Currency: "USD"},
			[]step{{2500, 67, 50, 77}, {7500, 199, 149, 232}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before int64
			var sum Fee
			for i, s := range tc.steps {
				got, err := FeeReversal(tc.fee, tc.amount, before, s.amount)
				if err != nil {
					t.Fatal(err)
				}
				if got.ServiceFeeEUR != s.service || got.PSPFeeEUR != s.psp || got.ServiceFeeChargeCurrency != s.inCurrency {
					t.Errorf("refund %d of %d: reversed %d/%d/%d, want %d/%d/%d", i+1, s.amount, got.ServiceFeeEUR,
						got.PSPFeeEUR, got.ServiceFeeChargeCurrency, s.service, s.psp, s.inCurrency)
				}
				before += s.amount
				sum.ServiceFeeEUR += got.ServiceFeeEUR
				sum.PSPFeeEUR += got.PSPFeeEUR
				sum.ServiceFeeChargeCurrency += got.ServiceFeeChargeCurrency
			}
			if sum.ServiceFeeEUR != tc.fee.ServiceFeeEUR || sum.PSPFeeEUR != tc.fee.PSPFeeEUR ||
				sum.ServiceFeeChargeCurrency != tc.fee.ServiceFeeChargeCurrency {
				t.Errorf("the reversals sum to %+v, want the fee %+v", sum, tc.fee)
			}
		})
	}
}

// Whatever the split, the reversals of a payment's refunds are never negative, each is within
// one minor unit of its exact share, and together they are the whole fee.
func TestFeeReversalsAlwaysSumToTheFee(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 27))
	for range 2000 {
		amount := 250 + rng.Int64N(1_000_000)
		fee := Fee{ServiceFeeEUR: rng.Int64N(amount), PSPFeeEUR: 0, ServiceFeeChargeCurrency: rng.Int64N(amount), Currency: "EUR"}
		fee.PSPFeeEUR = rng.Int64N(fee.ServiceFeeEUR + 1)
		var before int64
		var sum Fee
		for before < amount {
			part := 1 + rng.Int64N(amount-before)
			if rng.IntN(3) == 0 {
				part = 1 + rng.Int64N(min(amount-before, 7))
			}
			got, err := FeeReversal(fee, amount, before, part)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []struct{ got, whole int64 }{{got.ServiceFeeEUR, fee.ServiceFeeEUR},
				{got.PSPFeeEUR, fee.PSPFeeEUR}, {got.ServiceFeeChargeCurrency, fee.ServiceFeeChargeCurrency}} {
				exact := float64(v.whole) * float64(part) / float64(amount)
				if v.got < 0 || float64(v.got) > exact+1 || float64(v.got) < exact-1 {
					t.Fatalf("fee %d of %d: refund %d after %d reverses %d (exact %.3f)", v.whole, amount, part, before, v.got, exact)
				}
			}
			before += part
			sum.ServiceFeeEUR += got.ServiceFeeEUR
			sum.PSPFeeEUR += got.PSPFeeEUR
			sum.ServiceFeeChargeCurrency += got.ServiceFeeChargeCurrency
		}
		if sum.ServiceFeeEUR != fee.ServiceFeeEUR || sum.PSPFeeEUR != fee.PSPFeeEUR || sum.ServiceFeeChargeCurrency != fee.ServiceFeeChargeCurrency {
			t.Fatalf("amount %d: reversals %+v, fee %+v", amount, sum, fee)
		}
	}
}

// CheckRefund counts the refunds still at the processor as refunded: two refunds asked at the
// same moment never promise more than the captured amount.
func TestCheckRefundCountsReservedRefunds(t *testing.T) {
	p := mustPayment(t, nil) // USD 100.00
	if err := p.CheckRefund(6000, 0, t0); err != nil {
		t.Fatal(err)
	}
	if err := p.CheckRefund(4000, 6000, t0); err != nil {
		t.Fatalf("the rest: %v", err)
	}
	if err := p.CheckRefund(4001, 6000, t0); !errors.Is(err, ErrRefundExceedsCaptured) {
		t.Fatalf("one cent beyond the rest: %v, want refund_exceeds_captured", err)
	}
	if err := p.CheckRefund(1, 10000, t0); !errors.Is(err, ErrRefundExceedsCaptured) {
		t.Fatalf("everything reserved: %v", err)
	}
}

// The window is measured from the charge: exactly 180 days later is inside, a second more is not.
func TestCheckRefundWindow(t *testing.T) {
	p := mustPayment(t, nil)
	if err := p.CheckRefund(100, 0, t0.Add(180*24*time.Hour)); err != nil {
		t.Fatalf("at 180 days: %v", err)
	}
	if err := p.CheckRefund(100, 0, t0.Add(180*24*time.Hour+time.Second)); !errors.Is(err, ErrRefundWindowPassed) {
		t.Fatalf("a second later: %v", err)
	}
}

// A fully refunded payment, a processing and a failed one are not refundable (422
// charge_not_refundable); a disputed one is charge_disputed.
func TestCheckRefundStates(t *testing.T) {
	full := mustPayment(t, nil)
	if _, err := full.Refund(10000, t0); err != nil {
		t.Fatal(err)
	}
	processing := mustPayment(t, func(p *NewPaymentParams) {
		p.Status, p.Method, p.Card = StatusProcessing, MethodSEPADebit, nil
	})
	disputed := mustPayment(t, nil)
	if err := disputed.OpenDispute(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *Payment
		want *core.Error
	}{{"refunded", full, ErrChargeNotRefundable}, {"processing", processing, ErrChargeNotRefundable},
		{"disputed", disputed, ErrChargeDisputed}} {
		if err := tc.p.CheckRefund(100, 0, t0); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want.Code)
		}
	}
}

// A refund the processor made while a dispute opened is still applied: the payment stays
// disputed and a won dispute returns to the refunded state.
func TestApplyRefundDuringADispute(t *testing.T) {
	p := mustPayment(t, nil)
	if err := p.OpenDispute(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ApplyRefund(4000); err != nil {
		t.Fatal(err)
	}
	if p.Status() != StatusDisputed || p.AmountRefunded() != 4000 {
		t.Fatalf("status %s refunded %d", p.Status(), p.AmountRefunded())
	}
	if err := p.WinDispute(); err != nil {
		t.Fatal(err)
	}
	if p.Status() != StatusPartiallyRefunded {
		t.Fatalf("after a won dispute: %s", p.Status())
	}
}

// A refund is resolved once.
func TestRefundResolvesOnce(t *testing.T) {
	p := mustPayment(t, nil)
	r := NewRefund(p, 100, ReasonDuplicate, t0, t0)
	if r.Status() != RefundPending || r.Changed() {
		t.Fatalf("new refund %s", r.Status())
	}
	if err := r.Succeed("sbre_1", Fee{Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Succeed("sbre_2", Fee{}); err == nil {
		t.Fatal("resolved twice")
	}
	if err := r.Fail("x", "y"); err == nil {
		t.Fatal("failed after success")
	}
}
