package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

func init() {
	sectionTitles["REFUND"] = "refunds (dashboard)"
}

// refund asks the dashboard API for a refund of payment id (amount nil: the rest).
func refund(t *testing.T, o *DashOwner, id string, amount *int64, key string) *dash.CreateRefundResponse {
	t.Helper()
	var params *dash.CreateRefundParams
	if key != "" {
		params = &dash.CreateRefundParams{IdempotencyKey: &key}
	}
	reason := dash.RefundCreateReasonRequestedByCustomer
	r, err := o.Client.CreateRefundWithResponse(context.Background(), dash.DashboardEnvironmentTest, id, params,
		dash.RefundCreate{Amount: amount, Reason: &reason})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// refundOK is refund expecting 201.
func refundOK(t *testing.T, o *DashOwner, id string, amount *int64) *dash.Refund {
	t.Helper()
	r := refund(t, o, id, amount, "")
	if r.JSON201 == nil {
		t.Fatalf("refund %v of %s: %d %s", amount, id, r.StatusCode(), r.Body)
	}
	return r.JSON201
}

// paymentDetail reads the payment detail of the dashboard.
func paymentDetail(t *testing.T, o *DashOwner, id string) *dash.PaymentDetail {
	t.Helper()
	r, err := o.Client.GetPaymentWithResponse(context.Background(), dash.DashboardEnvironmentTest, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("payment %s: %d %s", id, r.StatusCode(), r.Body)
	}
	return r.JSON200
}

// shareHalfUp is round(part × refunded / amount), half-up, in integers.
func shareHalfUp(part, refunded, amount int64) int64 {
	return (2*part*refunded + amount) / (2 * amount)
}

// wantReversal checks a refund's fee reversal against the pro-rata rule on the running total.
func wantReversal(t *testing.T, rf *dash.Refund, fee api.PaymentFee, before, amount int64) {
	t.Helper()
	after := before + rf.Amount
	for _, c := range []struct {
		name      string
		got, part int64
	}{{"service_fee_eur", rf.FeeReversed.ServiceFeeEur, fee.ServiceFeeEur}, {"psp_fee_eur", rf.FeeReversed.PspFeeEur, fee.PspFeeEur},
		{"service_fee_charge_currency", rf.FeeReversed.ServiceFeeChargeCurrency, fee.ServiceFeeChargeCurrency}} {
		if want := shareHalfUp(c.part, after, amount) - shareHalfUp(c.part, before, amount); c.got != want {
			t.Errorf("%s reversed %d after %d of %d, want %d (fee part %d)", c.name, c.got, before, amount, want, c.part)
		}
	}
}

func TestRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "REFUND", "a full refund: refunded, the whole fee reversed, charge.refunded with the documented payload", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		rf := refundOK(t, o, s.Payment.Id, nil)
		fee := s.Payment.Fee
		if rf.Amount != 2500 || rf.Status != "succeeded" || rf.Currency != "EUR" || rf.Payment != s.Payment.Id ||
			rf.Reason != "requested_by_customer" || rf.FeeReversed.ServiceFeeEur != fee.ServiceFeeEur ||
			rf.FeeReversed.PspFeeEur != fee.PspFeeEur || rf.FeeReversed.ServiceFeeChargeCurrency != fee.ServiceFeeChargeCurrency {
			t.Fatalf("refund %+v for fee %+v", rf, fee)
		}
		p := asyncPayment(t, o.Merchant, s.Id)
		if p.Status != "refunded" || p.AmountRefunded != 2500 {
			t.Fatalf("payment after a full refund: %s, refunded %d", p.Status, p.AmountRefunded)
		}
		e := asyncOne(t, o.Merchant, "charge.refunded", "charge_id", s.Payment.Id)
		got, _ := json.Marshal(e.Data.Object)
		want := fmt.Sprintf(`{"amount":2500,"amount_refunded":2500,"charge_id":%q,"currency":"EUR","fully_refunded":true,"reason":"requested_by_customer","session_id":%q}`,
			s.Payment.Id, s.Id)
		if string(got) != want {
			t.Fatalf("charge.refunded data.object\n got %s\nwant %s", got, want)
		}
		asyncOne(t, o.Merchant, "checkout.session.refunded", "id", s.Id)
		again := refund(t, o, s.Payment.Id, nil, "")
		wantErr(t, again, again.HTTPResponse, again.Body, 422, "invalid_state", "charge_not_refundable", "")
	})

	harness.Rule(t, "REFUND", "partial refunds up to the captured amount, then one cent beyond is refused", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		first := refundOK(t, o, s.Payment.Id, ptr(int64(1000)))
		if p := asyncPayment(t, o.Merchant, s.Id); p.Status != "partially_refunded" || p.AmountRefunded != 1000 {
			t.Fatalf("after 10.00: %s %d", p.Status, p.AmountRefunded)
		}
		e := asyncOne(t, o.Merchant, "charge.refunded", "charge_id", s.Payment.Id)
		if e.Data.Object["fully_refunded"] != false || e.Data.Object["amount_refunded"] != float64(1000) {
			t.Fatalf("partial charge.refunded %v", e.Data.Object)
		}
		over := refund(t, o, s.Payment.Id, ptr(int64(1501)), "")
		wantErr(t, over, over.HTTPResponse, over.Body, 400, "amount_too_large", "refund_exceeds_captured", "amount")
		second := refundOK(t, o, s.Payment.Id, ptr(int64(1500)))
		if p := asyncPayment(t, o.Merchant, s.Id); p.Status != "refunded" || p.AmountRefunded != 2500 {
			t.Fatalf("after the rest: %s %d", p.Status, p.AmountRefunded)
		}
		beyond := refund(t, o, s.Payment.Id, ptr(int64(1)), "")
		wantErr(t, beyond, beyond.HTTPResponse, beyond.Body, 422, "invalid_state", "charge_not_refundable", "")
		// The payment page lists both, newest first, with their fee reversals.
		d := paymentDetail(t, o, s.Payment.Id)
		if len(d.Refunds) != 2 || d.Refunds[0].Id != second.Id || d.Refunds[1].Id != first.Id {
			t.Fatalf("refunds on the payment: %+v", d.Refunds)
		}
		fee := s.Payment.Fee
		if sum := first.FeeReversed.ServiceFeeEur + second.FeeReversed.ServiceFeeEur; sum != fee.ServiceFeeEur {
			t.Fatalf("service fee reversed %d in all, fee %d", sum, fee.ServiceFeeEur)
		}
		refundedEvents := 0
		for _, e := range d.Events {
			if e.Type == "charge.refunded" {
				refundedEvents++
			}
		}
		if refundedEvents != 2 {
			t.Fatalf("%d charge.refunded among the payment's events, want 2", refundedEvents)
		}
	})

	harness.Rule(t, "REFUND", "the payer gets a refund e-mail for each refund, with the amount and the total refunded", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		rf := refundOK(t, o, s.Payment.Id, ptr(int64(1000)))
		got := receiptsIn(t, o, 2, 15*time.Second) // the payment's receipt and the refund's
		var mail *dash.MailboxMessage
		for i := range got {
			if strings.Contains(got[i].Subject, "Refund") {
				mail = &got[i]
			}
		}
		if mail == nil || mail.To != "ada@example.com" || !strings.Contains(mail.Subject, "10.00") ||
			!strings.Contains(mail.Text, rf.Id) || !strings.Contains(mail.Text, "25.00") {
			t.Fatalf("refund e-mail %+v among %d messages", mail, len(got))
		}
	})

	harness.Rule(t, "REFUND", "a refund amount of zero, or an unknown reason, is a 400 naming the field", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		zero := refund(t, o, s.Payment.Id, ptr(int64(0)), "")
		wantErr(t, zero, zero.HTTPResponse, zero.Body, 400, "invalid_request", "amount_invalid", "amount")
		bad := dashRaw(t, http.MethodPost, "/api/v1/test/payments/"+s.Payment.Id+"/refunds", o.sessionToken(t),
			`{"reason":"changed_mind"}`, map[string]string{"X-CSRF-Token": o.CSRF})
		if bad.Status != 400 {
			t.Fatalf("unknown reason: %d %s", bad.Status, bad.Body)
		}
	})

	harness.Rule(t, "D9", "a refund exactly 180 days after the charge is accepted, one second later it is refused", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		created := s.Payment.Created
		clk := clockAdvance(t, o.Test, 180*24*3600)
		if clk.Now != created+180*24*3600 {
			t.Fatalf("clock at %d, payment created %d", clk.Now, created)
		}
		refundOK(t, o, s.Payment.Id, ptr(int64(100)))
		clockAdvance(t, o.Test, 1)
		late := refund(t, o, s.Payment.Id, ptr(int64(100)), "")
		wantErr(t, late, late.HTTPResponse, late.Body, 422, "invalid_state", "charge_refund_window_passed", "")
	})

	harness.Rule(t, "D9", "a disputed payment is not refunded: 422 charge_disputed", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardDispute)
		clockAdvance(t, o.Test, 120)
		if p := asyncPayment(t, o.Merchant, s.Id); p.Status != "disputed" {
			t.Fatalf("payment %s, want disputed", p.Status)
		}
		r := refund(t, o, s.Payment.Id, nil, "")
		wantErr(t, r, r.HTTPResponse, r.Body, 422, "invalid_state", "charge_disputed", "")
	})

	harness.Rule(t, "D16", "a processing SEPA payment is not refunded: 422 charge_not_refundable", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := asyncPay(t, o.Merchant, payIBANOK)
		p := asyncPayment(t, o.Merchant, s.Id)
		if p.Status != "processing" {
			t.Fatalf("payment %s, want processing", p.Status)
		}
		r := refund(t, o, p.Id, nil, "")
		wantErr(t, r, r.HTTPResponse, r.Body, 422, "invalid_state", "charge_not_refundable", "")
	})

	harness.Rule(t, "D16", "the fee is reversed pro rata, half-up, and the completing refund reverses the rest (EUR, JPY, USD)", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		// EUR 25.00 with the US card: 2.8% + 0.25 EUR = 95 cents. Half of it is 47.5: the first
		// half reverses 48 (half-up), the second the 47 left.
		eur := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		if eur.Payment.Fee.ServiceFeeEur != 95 {
			t.Fatalf("EUR fee %+v, want 95", eur.Payment.Fee)
		}
		a := refundOK(t, o, eur.Payment.Id, ptr(int64(1250)))
		b := refundOK(t, o, eur.Payment.Id, nil)
		if a.FeeReversed.ServiceFeeEur != 48 || b.FeeReversed.ServiceFeeEur != 47 {
			t.Fatalf("EUR reversals %d and %d, want 48 and 47", a.FeeReversed.ServiceFeeEur, b.FeeReversed.ServiceFeeEur)
		}
		wantReversal(t, a, eur.Payment.Fee, 0, 2500)
		wantReversal(t, b, eur.Payment.Fee, 1250, 2500)
		for _, c := range []struct {
			currency string
			amount   int64
			parts    []int64
		}{{"jpy", 10000, []int64{3333, 3333, 3334}}, {"usd", 10000, []int64{2500, 1, 7499}}} {
			s := dashPay(t, o.Merchant, c.amount, c.currency, payCardOK)
			fee := s.Payment.Fee
			var before, service, psp, inCurrency int64
			for _, part := range c.parts {
				rf := refundOK(t, o, s.Payment.Id, ptr(part))
				wantReversal(t, rf, fee, before, c.amount)
				before += part
				service += rf.FeeReversed.ServiceFeeEur
				psp += rf.FeeReversed.PspFeeEur
				inCurrency += rf.FeeReversed.ServiceFeeChargeCurrency
			}
			if service != fee.ServiceFeeEur || psp != fee.PspFeeEur || inCurrency != fee.ServiceFeeChargeCurrency {
				t.Fatalf("%s: reversed %d/%d/%d, fee %+v", c.currency, service, psp, inCurrency, fee)
			}
		}
	})

	harness.Rule(t, "D16", "20 concurrent partial refunds never exceed the captured amount", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = refund(t, o, s.Payment.Id, ptr(int64(150)), "").StatusCode()
			}()
		}
		wg.Wait()
		sort.Ints(statuses)
		ok, refused := 0, 0
		for _, st := range statuses {
			switch st {
			case 201:
				ok++
			case 400:
				refused++
			default:
				t.Fatalf("statuses %v", statuses)
			}
		}
		p := asyncPayment(t, o.Merchant, s.Id)
		if ok != 16 || refused != 4 || p.AmountRefunded != 2400 || p.Status != "partially_refunded" {
			t.Fatalf("%d refunded, %d refused, payment %s %d; want 16, 4, 2400", ok, refused, p.Status, p.AmountRefunded)
		}
		if n := len(asyncEvents(t, o.Merchant, "charge.refunded", "charge_id", s.Payment.Id)); n != 16 {
			t.Fatalf("%d charge.refunded events, want 16", n)
		}
	})

	harness.Rule(t, "D16", "a double submit with one Idempotency-Key makes one refund", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		key := "refund-" + s.Payment.Id
		first := refund(t, o, s.Payment.Id, ptr(int64(700)), key)
		second := refund(t, o, s.Payment.Id, ptr(int64(700)), key)
		if first.JSON201 == nil || second.JSON201 == nil || first.JSON201.Id != second.JSON201.Id ||
			second.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("double submit: %d %s / %d %s", first.StatusCode(), first.Body, second.StatusCode(), second.Body)
		}
		if p := asyncPayment(t, o.Merchant, s.Id); p.AmountRefunded != 700 {
			t.Fatalf("refunded %d, want 700", p.AmountRefunded)
		}
		other := refund(t, o, s.Payment.Id, ptr(int64(800)), key)
		wantErr(t, other, other.HTTPResponse, other.Body, 409, "idempotency_error", "idempotency_key_reused", "")
		list, err := o.Client.ListRefundsWithResponse(ctx, dash.DashboardEnvironmentTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if list.JSON200 == nil || len(list.JSON200.Data) != 1 || list.JSON200.Data[0].Id != first.JSON201.Id ||
			list.JSON200.Url != "/api/v1/test/refunds" {
			t.Fatalf("refunds list %s", list.Body)
		}
	})

	harness.Rule(t, "ISO", "another merchant or the other environment cannot refund or see a payment's refunds: 404", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		other := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		refundOK(t, o, s.Payment.Id, ptr(int64(100)))
		r := refund(t, other, s.Payment.Id, nil, "")
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "payment_not_found", "id")
		reason := dash.RefundCreateReasonDuplicate
		live, err := o.Client.CreateRefundWithResponse(ctx, dash.DashboardEnvironmentLive, s.Payment.Id, nil, dash.RefundCreate{Reason: &reason})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, live, live.HTTPResponse, live.Body, 404, "not_found", "payment_not_found", "id")
		for _, c := range []struct {
			who *DashOwner
			env dash.DashboardEnvironment
		}{{other, dash.DashboardEnvironmentTest}, {o, dash.DashboardEnvironmentLive}} {
			l, err := c.who.Client.ListRefundsWithResponse(ctx, c.env, nil)
			if err != nil {
				t.Fatal(err)
			}
			if l.JSON200 == nil || len(l.JSON200.Data) != 0 {
				t.Fatalf("%s list shows another's refunds: %s", c.env, l.Body)
			}
		}
		if p := asyncPayment(t, o.Merchant, s.Id); p.AmountRefunded != 100 {
			t.Fatalf("refunded %d, want 100", p.AmountRefunded)
		}
	})

	harness.Rule(t, "6.1", "an endpoint subscribed to charge.refunded receives it signed, with the documented payload, once per refund", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL, "charge.refunded")
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		refundOK(t, o, s.Payment.Id, ptr(int64(500)))
		refundOK(t, o, s.Payment.Id, nil)
		hits := rc.waitFor(t, 2, 20*time.Second, nil)
		seen := map[string]bool{}
		for _, h := range hits {
			if !hookSignedBy(t, h, ep.Secret) {
				t.Fatalf("delivery not signed with the endpoint's secret: %s", h.Header.Get("Service-Signature"))
			}
			e := h.envelope(t)
			if e.Type != "charge.refunded" || h.Header.Get("Service-Event-Type") != "charge.refunded" {
				t.Fatalf("delivered %s", e.Type)
			}
			var obj map[string]any
			if err := json.Unmarshal(e.Data.Object, &obj); err != nil {
				t.Fatal(err)
			}
			if len(obj) != 7 || obj["charge_id"] != s.Payment.Id || obj["session_id"] != s.Id || obj["amount"] != float64(2500) ||
				obj["currency"] != "EUR" || obj["reason"] != "requested_by_customer" {
				t.Fatalf("payload %s", e.Data.Object)
			}
			seen[fmt.Sprint(obj["amount_refunded"], obj["fully_refunded"])] = true
		}
		if !seen["500 false"] || !seen["2500 true"] || len(hits) != 2 {
			t.Fatalf("deliveries %v (%d), want one at 500 and one fully refunded at 2500", seen, len(hits))
		}
	})
}
