package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// subPlain creates a monthly subscription of €9.00 without a trial.
func subPlain(t *testing.T, o *DashOwner) api.Subscription {
	t.Helper()
	pr := subPrice(t, o.Merchant, 900, nil)
	return subCreate(t, o.Merchant, subBody(pr.Id))
}

// subInvoice reads the subscription's invoice through the dashboard API.
func subInvoice(t *testing.T, o *DashOwner, id string) *dash.Invoice {
	t.Helper()
	r, err := o.Client.GetInvoiceWithResponse(context.Background(), dashTest, id)
	if err != nil || r.JSON200 == nil {
		t.Fatalf("invoice %s: %v %s", id, err, r.Body)
	}
	return r.JSON200
}

func TestSubscriptionsFirstInvoice(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D14", "a subscription without a trial has its first invoice open, numbered, with the subscription and price × quantity, and a client secret to pay it", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		pr := subPrice(t, o.Merchant, 900, nil)
		body := subBody(pr.Id)
		body["quantity"] = 3
		s := subCreate(t, o.Merchant, body)
		if s.Status != wire.SubscriptionStatusIncomplete || s.LatestInvoice == nil || s.ClientSecret == nil {
			t.Fatalf("subscription %+v", s)
		}
		id, secret := subPI(t, s)
		inv := subInvoice(t, o, *s.LatestInvoice)
		if inv.Status != "open" || inv.Number == nil || !strings.Contains(*inv.Number, "-INV-") || inv.Subscription == nil ||
			*inv.Subscription != s.Id || len(inv.LineItems) != 1 || inv.LineItems[0].Quantity != 3 ||
			inv.LineItems[0].UnitAmount != 900 || inv.TotalAmount != 2700 || inv.AmountDue != 2700 || inv.HostedInvoiceUrl == nil {
			t.Fatalf("first invoice %+v", inv)
		}
		if got := invoiceEvents(t, o.Test, inv.Id); strings.Join(got, ",") != "invoice.finalized" {
			t.Fatalf("invoice events %v", got)
		}
		v, err := payClient(t, secret).GetBuyerPaymentIntentWithResponse(context.Background(), id)
		if err != nil || v.JSON200 == nil || v.JSON200.Amount != 2700 || v.JSON200.Status != capi.BuyerPaymentIntentStatusRequiresPaymentMethod {
			t.Fatalf("view %v %s", err, v.Body)
		}
	})

	harness.Rule(t, "D14", "confirming the first payment charges the invoice: paid, a Payment with invoice_id and its fee, a receipt, invoice.paid, and the subscription active with the card as its default", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subPlain(t, o)
		id, secret := subPI(t, s)
		resp := subConfirm(t, secret, id, payCard("4242424242424242"))
		v := resp.JSON200
		if v == nil || v.Status != capi.BuyerPaymentIntentStatusSucceeded || v.SubscriptionStatus != "active" || v.Amount != 900 ||
			v.PaymentMethod == nil || v.PaymentMethod.Last4 != "4242" {
			t.Fatalf("confirm: %d %s", resp.StatusCode(), resp.Body)
		}
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusActive || got.DefaultPaymentMethod == nil || got.DefaultPaymentMethod.Last4 != "4242" {
			t.Fatalf("subscription %+v", got)
		}
		inv := subInvoice(t, o, *s.LatestInvoice)
		if inv.Status != "paid" || inv.AmountPaid != 900 || inv.AmountDue != 0 || inv.PaymentId == nil {
			t.Fatalf("invoice %+v", inv)
		}
		pr, err := o.Client.GetPaymentWithResponse(context.Background(), dashTest, *inv.PaymentId)
		if err != nil || pr.JSON200 == nil {
			t.Fatalf("payment: %v", err)
		}
		p := pr.JSON200.Payment
		if p.InvoiceId == nil || *p.InvoiceId != inv.Id || p.Amount != 900 || p.Fee.ServiceFeeEur <= 0 {
			t.Fatalf("payment %+v", p)
		}
		if evs := invoiceEvents(t, o.Test, inv.Id); strings.Join(evs, ",") != "invoice.finalized,payment_intent.succeeded,invoice.payment_succeeded,invoice.paid" {
			t.Fatalf("invoice events %v", evs)
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated")
		if msgs := receiptsIn(t, o, 1, 10e9); len(msgs) < 1 {
			t.Fatal("no receipt e-mail")
		}
		// Paid: confirming again is refused.
		r := subConfirm(t, secret, id, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
	})

	harness.Rule(t, "D14", "a declined first payment is 402 card_error, keeps the subscription incomplete and its invoice open, and can be retried", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subPlain(t, o)
		id, secret := subPI(t, s)
		r := subConfirm(t, secret, id, payCard("4000000000000341"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusPaymentRequired, "card_error", "card_declined", "")
		if got := subGet(t, o.Merchant, s.Id); got.Status != wire.SubscriptionStatusIncomplete || got.DefaultPaymentMethod != nil {
			t.Fatalf("after a decline %+v", got)
		}
		if inv := subInvoice(t, o, *s.LatestInvoice); inv.Status != "open" {
			t.Fatalf("invoice after a decline: %s", inv.Status)
		}
		if evs := invoiceEvents(t, o.Test, *s.LatestInvoice); !strings.Contains(strings.Join(evs, ","), "invoice.payment_failed") {
			t.Fatalf("invoice events %v", evs)
		}
		if v := subConfirm(t, secret, id, payCard("4242424242424242")).JSON200; v == nil || v.SubscriptionStatus != "active" {
			t.Fatal("retry after the decline failed")
		}
	})

	harness.Rule(t, "D14", "a SEPA first payment reads processing while the debit settles, takes no other confirmation, and succeeds with the subscription active once settled (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subPlain(t, o)
		id, secret := subPI(t, s)
		resp := subConfirm(t, secret, id, paySEPA("DE89370400440532013000"))
		if v := resp.JSON200; v == nil || v.Status != capi.BuyerPaymentIntentStatusProcessing || v.SubscriptionStatus != "incomplete" || v.Amount != 900 {
			t.Fatalf("confirm: %d %s", resp.StatusCode(), resp.Body)
		}
		v, err := payClient(t, secret).GetBuyerPaymentIntentWithResponse(context.Background(), id)
		if err != nil || v.JSON200 == nil || v.JSON200.Status != capi.BuyerPaymentIntentStatusProcessing {
			t.Fatalf("view while settling %v %s", err, v.Body)
		}
		r := subConfirm(t, secret, id, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
		clockAdvance(t, o.Test, 120)
		v, err = payClient(t, secret).GetBuyerPaymentIntentWithResponse(context.Background(), id)
		if err != nil || v.JSON200 == nil || v.JSON200.Status != capi.BuyerPaymentIntentStatusSucceeded || v.JSON200.SubscriptionStatus != "active" {
			t.Fatalf("view once settled %v %s", err, v.Body)
		}
		if inv := subInvoice(t, o, *s.LatestInvoice); inv.Status != "paid" {
			t.Fatalf("invoice once settled: %s", inv.Status)
		}
	})

	harness.Rule(t, "D14", "an incomplete subscription expires after 23 hours and its open invoice is voided with invoice.voided (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subPlain(t, o)
		id, secret := subPI(t, s)
		clockAdvance(t, o.Test, 23*3600)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusIncompleteExpired {
			t.Fatalf("after 23 h: %s", got.Status)
		}
		inv := subInvoice(t, o, *s.LatestInvoice)
		if inv.Status != "void" {
			t.Fatalf("invoice after expiry: %s", inv.Status)
		}
		if evs := invoiceEvents(t, o.Test, inv.Id); strings.Join(evs, ",") != "invoice.finalized,invoice.voided" {
			t.Fatalf("invoice events %v", evs)
		}
		r := subConfirm(t, secret, id, payCard("4242424242424242"))
		wantErr(t, r, r.HTTPResponse, r.Body, http.StatusUnprocessableEntity, "invalid_state", "payment_intent_unexpected_state", "")
	})

	harness.Rule(t, "D14", "cancelling an incomplete subscription voids its open invoice", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		s := subPlain(t, o)
		c := catDecode[api.Subscription](t, catPost(t, o.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{}))
		if c.Status != wire.SubscriptionStatusCanceled {
			t.Fatalf("cancelled %+v", c)
		}
		if inv := subInvoice(t, o, *s.LatestInvoice); inv.Status != "void" {
			t.Fatalf("invoice after cancel: %s", inv.Status)
		}
	})
}

// subTrialPaid creates a subscription with a 14-day trial of €9.00 a month on a frozen test
// clock and confirms its first payment with card number.
func subTrialPaid(t *testing.T, o *DashOwner, number string) api.Subscription {
	t.Helper()
	pr := subPrice(t, o.Merchant, 900, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(14)})
	s := subCreate(t, o.Merchant, subBody(pr.Id))
	id, secret := subPI(t, s)
	if v := subConfirm(t, secret, id, payCard(number)).JSON200; v == nil || v.SubscriptionStatus != "trialing" {
		t.Fatalf("trial confirmation with %s failed", number)
	}
	return s
}

// subPaymentOf reads the payment that paid invoice inv.
func subPaymentOf(t *testing.T, o *DashOwner, inv *dash.Invoice) wire.Payment {
	t.Helper()
	if inv.PaymentId == nil {
		t.Fatalf("invoice %s has no payment", inv.Id)
	}
	pr, err := o.Client.GetPaymentWithResponse(context.Background(), dashTest, *inv.PaymentId)
	if err != nil || pr.JSON200 == nil {
		t.Fatalf("payment %s: %v", *inv.PaymentId, err)
	}
	return pr.JSON200.Payment
}

func TestSubscriptionsRenewals(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D8", "at the trial end an invoice is created, finalised and charged off-session: paid, a payment with invoice_id and its fee, the next period, active (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4242424242424242")
		clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusActive || got.CurrentPeriodStart != *s.TrialEnd ||
			got.CurrentPeriodEnd != subNextMonth(*s.TrialEnd) || got.LatestInvoice == nil {
			t.Fatalf("after the trial end %+v", got)
		}
		inv := subInvoice(t, o, *got.LatestInvoice)
		if inv.Status != "paid" || inv.TotalAmount != 900 || inv.Subscription == nil || *inv.Subscription != s.Id ||
			inv.IssueDate == nil || *inv.IssueDate != *s.TrialEnd || inv.DunningStage != nil {
			t.Fatalf("trial end invoice %+v", inv)
		}
		p := subPaymentOf(t, o, inv)
		if p.InvoiceId == nil || *p.InvoiceId != inv.Id || p.Amount != 900 || p.Fee.ServiceFeeEur <= 0 || p.Created != *s.TrialEnd {
			t.Fatalf("payment %+v", p)
		}
		if evs := invoiceEvents(t, o.Test, inv.Id); strings.Join(evs, ",") != "invoice.finalized,payment_intent.succeeded,invoice.payment_succeeded,invoice.paid" {
			t.Fatalf("invoice events %v", evs)
		}
		subWantEvents(t, o.Merchant, s.Id, "customer.subscription.created", "customer.subscription.updated",
			"customer.subscription.trial_will_end", "customer.subscription.updated")
	})

	harness.Rule(t, "D14", "at current_period_end an active subscription renews: a new paid invoice, the period advances, invoice.payment_succeeded (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subPlain(t, o)
		id, secret := subPI(t, s)
		if v := subConfirm(t, secret, id, payCard("4242424242424242")).JSON200; v == nil || v.SubscriptionStatus != "active" {
			t.Fatal("first payment failed")
		}
		end := subGet(t, o.Merchant, s.Id).CurrentPeriodEnd
		clockAdvance(t, o.Test, end-s.Created-1)
		if got := subGet(t, o.Merchant, s.Id); *got.LatestInvoice != *s.LatestInvoice {
			t.Fatal("renewed before the period end")
		}
		clockAdvance(t, o.Test, 1)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusActive || got.CurrentPeriodStart != end || got.CurrentPeriodEnd != subNextMonth(end) ||
			*got.LatestInvoice == *s.LatestInvoice {
			t.Fatalf("after the renewal %+v", got)
		}
		inv := subInvoice(t, o, *got.LatestInvoice)
		if inv.Status != "paid" || subPaymentOf(t, o, inv).Amount != 900 {
			t.Fatalf("renewal invoice %+v", inv)
		}
		first := subInvoice(t, o, *s.LatestInvoice)
		if *inv.Number == *first.Number {
			t.Fatalf("the renewal reused number %s", *inv.Number)
		}
		// Two more periods in one advance: two more invoices, in time order.
		clockAdvance(t, o.Test, subNextMonth(subNextMonth(end))-end)
		later := subGet(t, o.Merchant, s.Id)
		if later.CurrentPeriodStart != subNextMonth(subNextMonth(end)) || later.Status != wire.SubscriptionStatusActive {
			t.Fatalf("after two more periods %+v", later)
		}
		if n := len(evtList(t, o.Test, "invoice.payment_succeeded", 10).Data); n != 4 {
			t.Fatalf("invoice.payment_succeeded: %d, want 4", n)
		}
	})

	harness.Rule(t, "D14", "a SEPA renewal is processing at the trial end and paid when the debit settles two minutes later (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		pr := subPrice(t, o.Merchant, 900, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(14)})
		s := subCreate(t, o.Merchant, subBody(pr.Id))
		id, secret := subPI(t, s)
		if v := subConfirm(t, secret, id, paySEPA("DE89370400440532013000")).JSON200; v == nil || v.SubscriptionStatus != "trialing" {
			t.Fatal("SEPA trial confirmation failed")
		}
		clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusTrialing || got.LatestInvoice == nil {
			t.Fatalf("while the debit is processing %+v", got)
		}
		if inv := subInvoice(t, o, *got.LatestInvoice); inv.Status != "open" || inv.DunningStage != nil {
			t.Fatalf("processing invoice %+v", inv)
		}
		clockAdvance(t, o.Test, 120)
		after := subGet(t, o.Merchant, s.Id)
		inv := subInvoice(t, o, *got.LatestInvoice)
		if after.Status != wire.SubscriptionStatusActive || inv.Status != "paid" || subPaymentOf(t, o, inv).PaymentMethod != "sepa_debit" {
			t.Fatalf("after the settlement %+v, invoice %s", after, inv.Status)
		}
	})
}

// dunningMails waits for the merchant's mailbox to hold want messages whose subject contains
// part, and returns them.
func dunningMails(t *testing.T, o *DashOwner, part string, want int) []dash.MailboxMessage {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var out []dash.MailboxMessage
		for _, m := range receiptsIn(t, o, 0, 0) {
			if strings.Contains(m.Subject, part) {
				out = append(out, m)
			}
		}
		if len(out) >= want || time.Now().After(deadline) {
			if len(out) != want {
				t.Fatalf("mails with %q: %d, want %d", part, len(out), want)
			}
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// subWantDunning checks the open invoice's dunning fields.
func subWantDunning(t *testing.T, o *DashOwner, id, stage string, attempts int, next *int64) *dash.Invoice {
	t.Helper()
	inv := subInvoice(t, o, id)
	if inv.Status != "open" || inv.DunningStage == nil || string(*inv.DunningStage) != stage || inv.AttemptCount != attempts ||
		(next == nil) != (inv.NextPaymentAttempt == nil) || (next != nil && *next != *inv.NextPaymentAttempt) {
		t.Fatalf("invoice at stage %s: %+v (stage %v, next %v)", stage, inv, inv.DunningStage, inv.NextPaymentAttempt)
	}
	return inv
}

func TestSubscriptionsDunning(t *testing.T) {
	t.Parallel()
	const day = int64(86400)

	harness.Rule(t, "D8", "customer.subscription.trial_will_end e-mails the customer when the trial ends and what is charged then (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4242424242424242")
		clockAdvance(t, o.Test, *s.TrialEnd-3*day-s.Created)
		m := dunningMails(t, o, "trial ends on", 1)[0]
		if m.To != "ada@example.com" || !strings.Contains(m.Text, "9.00 EUR every month") || !strings.Contains(m.Text, "4242") {
			t.Fatalf("trial e-mail to %s: %s", m.To, m.Text)
		}
	})

	harness.Rule(t, "D8", "a failed renewal is past_due: invoice.payment_failed at notice, warning at +3 d, final at +7 d, exhausted and unpaid at +14 d, each with its e-mail and the hosted link (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4000000000000341")
		end := *s.TrialEnd
		clockAdvance(t, o.Test, end-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusPastDue || got.LatestInvoice == nil {
			t.Fatalf("after the failed trial-end charge %+v", got)
		}
		invID := *got.LatestInvoice
		next := end + 3*day
		inv := subWantDunning(t, o, invID, "notice", 1, &next)
		notice := dunningMails(t, o, "Payment failed", 1)[0]
		if !strings.Contains(notice.Text, *inv.HostedInvoiceUrl) || !strings.Contains(notice.Text, "9.00 EUR") ||
			!strings.Contains(notice.Text, *inv.Number) {
			t.Fatalf("notice e-mail %s", notice.Text)
		}
		clockAdvance(t, o.Test, 3*day)
		next = end + 7*day
		subWantDunning(t, o, invID, "warning", 2, &next)
		dunningMails(t, o, "Second reminder", 1)
		clockAdvance(t, o.Test, 4*day)
		next = end + 14*day
		subWantDunning(t, o, invID, "final", 3, &next)
		dunningMails(t, o, "Final notice", 1)
		if st := subGet(t, o.Merchant, s.Id).Status; st != wire.SubscriptionStatusPastDue {
			t.Fatalf("before the last retry: %s", st)
		}
		clockAdvance(t, o.Test, 7*day)
		subWantDunning(t, o, invID, "exhausted", 4, nil)
		dunningMails(t, o, "is suspended", 1)
		if st := subGet(t, o.Merchant, s.Id).Status; st != wire.SubscriptionStatusUnpaid {
			t.Fatalf("after the last retry: %s", st)
		}
		if n := len(evtList(t, o.Test, "invoice.payment_failed", 10).Data); n != 4 {
			t.Fatalf("invoice.payment_failed: %d, want 4", n)
		}
		// Unpaid creates no invoices.
		clockAdvance(t, o.Test, 40*day)
		if g := subGet(t, o.Merchant, s.Id); g.Status != wire.SubscriptionStatusUnpaid || *g.LatestInvoice != invID {
			t.Fatalf("an unpaid subscription billed again: %+v", g)
		}
	})

	harness.Rule(t, "D14", "paying an unpaid subscription's invoice on its hosted page makes it active; billing resumes at the next period boundary without back-billing (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4000000000000341")
		end := *s.TrialEnd
		clockAdvance(t, o.Test, end-s.Created+14*day)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusUnpaid {
			t.Fatalf("not unpaid: %s", got.Status)
		}
		clockAdvance(t, o.Test, 30*day) // a period missed while unpaid
		paidAt := end + 44*day
		inv := subInvoice(t, o, *got.LatestInvoice)
		body := `{"payment_method":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2034,"cvc":"123"}}`
		ok := rawAt(t, target.CheckoutURL, http.MethodPost, "/api/v1/invoices/"+*inv.PublicToken+"/confirm", "", body, nil)
		if ok.Status != 200 || !strings.Contains(string(ok.Body), `"status":"paid"`) {
			t.Fatalf("hosted payment: %d %s", ok.Status, ok.Body)
		}
		after := subGet(t, o.Merchant, s.Id)
		if after.Status != wire.SubscriptionStatusActive || after.CurrentPeriodStart > paidAt || after.CurrentPeriodEnd <= paidAt ||
			*after.LatestInvoice != inv.Id {
			t.Fatalf("after the recovery %+v (paid at %d)", after, paidAt)
		}
		if dm := after.DefaultPaymentMethod; dm == nil || dm.Last4 != "4242" {
			t.Fatalf("default_payment_method %+v, want the card paid with through the browser API", dm)
		}
		if evs := subEvents(t, o.Merchant, s.Id); evs[len(evs)-1] != "customer.subscription.updated" {
			t.Fatalf("events %v", evs)
		}
		// Nothing is billed for the missed period; the next invoice comes at the next boundary.
		clockAdvance(t, o.Test, after.CurrentPeriodEnd-paidAt-1)
		if g := subGet(t, o.Merchant, s.Id); *g.LatestInvoice != inv.Id {
			t.Fatal("billed before the next period boundary")
		}
		clockAdvance(t, o.Test, 1)
		if g := subGet(t, o.Merchant, s.Id); *g.LatestInvoice == inv.Id || g.CurrentPeriodStart != after.CurrentPeriodEnd {
			t.Fatalf("no renewal at the next boundary: %+v", g)
		}
	})

	harness.Rule(t, "D14", "a past_due subscription's invoice paid on its hosted page is active again and its retries stop (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4000000000000341")
		clockAdvance(t, o.Test, *s.TrialEnd-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		inv := subInvoice(t, o, *got.LatestInvoice)
		body := `{"payment_method":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2034,"cvc":"123"}}`
		if ok := rawAt(t, target.CheckoutURL, http.MethodPost, "/api/v1/invoices/"+*inv.PublicToken+"/confirm", "", body, nil); ok.Status != 200 {
			t.Fatalf("hosted payment: %d %s", ok.Status, ok.Body)
		}
		after := subGet(t, o.Merchant, s.Id)
		if after.Status != wire.SubscriptionStatusActive || after.CurrentPeriodEnd != subNextMonth(*s.TrialEnd) {
			t.Fatalf("after paying %+v", after)
		}
		if dm := after.DefaultPaymentMethod; dm == nil || dm.Last4 != "4242" {
			t.Fatalf("default_payment_method %+v, want the card paid with through the browser API", dm)
		}
		clockAdvance(t, o.Test, 3*day)
		if paid := subInvoice(t, o, inv.Id); paid.Status != "paid" || paid.AttemptCount != 2 || paid.NextPaymentAttempt != nil {
			t.Fatalf("retried after the payment: %+v", paid)
		}
		if n := len(evtList(t, o.Test, "invoice.payment_failed", 10).Data); n != 1 {
			t.Fatalf("invoice.payment_failed: %d, want 1", n)
		}
	})

	harness.Rule(t, "D14", "a SEPA debit the customer makes on the hosted invoice page that fails counts in attempt_count but is no dunning attempt: stage, retry schedule and dunning e-mails stay (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		s := subTrialPaid(t, o, "4000000000000341")
		end := *s.TrialEnd
		clockAdvance(t, o.Test, end-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		invID := *got.LatestInvoice
		next := end + 3*day
		inv := subWantDunning(t, o, invID, "notice", 1, &next)
		body := `{"payment_method":"sepa_debit","sepa_debit":{"iban":"` + payIBANFailsLater + `","account_holder":"Ada Lovelace"}}`
		r := rawAt(t, target.CheckoutURL, http.MethodPost, "/api/v1/invoices/"+*inv.PublicToken+"/confirm", "", body, nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"status":"processing"`) {
			t.Fatalf("hosted SEPA payment: %d %s", r.Status, r.Body)
		}
		clockAdvance(t, o.Test, 3600) // the debit fails at settlement
		subWantDunning(t, o, invID, "notice", 2, &next)
		if n := len(evtList(t, o.Test, "invoice.payment_failed", 10).Data); n != 2 {
			t.Fatalf("invoice.payment_failed: %d, want 2 (the renewal and the customer's debit)", n)
		}
		dunningMails(t, o, "Payment failed", 1)
		if st := subGet(t, o.Merchant, s.Id).Status; st != wire.SubscriptionStatusPastDue {
			t.Fatalf("after the customer's failed debit: %s", st)
		}
		// The automatic retry keeps its time and is the second dunning attempt.
		clockAdvance(t, o.Test, next-end-3600)
		week := end + 7*day
		subWantDunning(t, o, invID, "warning", 3, &week)
		dunningMails(t, o, "Second reminder", 1)
	})

	harness.Rule(t, "D14", "a weekly past_due subscription whose period ended in dunning, paid on its hosted page, resumes at the next boundary after the payment without billing the missed weeks (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		pr := subPrice(t, o.Merchant, 900, &api.RecurringParams{Interval: wire.RecurringIntervalWeek, TrialPeriodDays: ptr(3)})
		s := subCreate(t, o.Merchant, subBody(pr.Id))
		id, secret := subPI(t, s)
		if v := subConfirm(t, secret, id, payCard("4000000000000341")).JSON200; v == nil || v.SubscriptionStatus != "trialing" {
			t.Fatal("trial confirmation failed")
		}
		end := *s.TrialEnd
		clockAdvance(t, o.Test, end-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusPastDue || got.CurrentPeriodEnd != end+7*day {
			t.Fatalf("after the failed trial-end charge %+v", got)
		}
		clockAdvance(t, o.Test, 10*day) // past the week's end, two retries failed
		paidAt := end + 10*day
		inv := subInvoice(t, o, *got.LatestInvoice)
		body := `{"payment_method":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2034,"cvc":"123"}}`
		if ok := rawAt(t, target.CheckoutURL, http.MethodPost, "/api/v1/invoices/"+*inv.PublicToken+"/confirm", "", body, nil); ok.Status != 200 {
			t.Fatalf("hosted payment: %d %s", ok.Status, ok.Body)
		}
		after := subGet(t, o.Merchant, s.Id)
		if after.Status != wire.SubscriptionStatusActive || after.CurrentPeriodStart != end+7*day || after.CurrentPeriodEnd != end+14*day ||
			*after.LatestInvoice != inv.Id {
			t.Fatalf("after paying at %d: %+v", paidAt, after)
		}
		clockAdvance(t, o.Test, after.CurrentPeriodEnd-paidAt-1)
		if g := subGet(t, o.Merchant, s.Id); *g.LatestInvoice != inv.Id {
			t.Fatal("a missed week was billed")
		}
		clockAdvance(t, o.Test, 1)
		if g := subGet(t, o.Merchant, s.Id); *g.LatestInvoice == inv.Id || g.CurrentPeriodStart != after.CurrentPeriodEnd {
			t.Fatalf("no renewal at the next boundary: %+v", g)
		}
	})

	harness.Rule(t, "D14", "a hard decline (expired card) is not retried: stage final at once with its e-mail, unpaid at +14 d unless paid (test clock)", func(t *testing.T) {
		t.Parallel()
		payNeedsCheckout(t)
		o := newDashOwner(t)
		now := time.Unix(clockFreeze(t, o.Test), 0).UTC()
		// A card that expires at the end of this month, and a trial that ends after it.
		pr := subPrice(t, o.Merchant, 900, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(40)})
		s := subCreate(t, o.Merchant, subBody(pr.Id))
		id, secret := subPI(t, s)
		card := capi.ConfirmRequest{PaymentMethod: "card", Card: &capi.CardInput{Number: ptr("4242424242424242"),
			ExpMonth: ptr(int(now.Month())), ExpYear: ptr(now.Year()), Cvc: ptr("123"), Name: ptr("Ada Lovelace")}}
		if v := subConfirm(t, secret, id, card).JSON200; v == nil || v.SubscriptionStatus != "trialing" {
			t.Fatal("trial confirmation failed")
		}
		end := *s.TrialEnd
		clockAdvance(t, o.Test, end-s.Created)
		got := subGet(t, o.Merchant, s.Id)
		if got.Status != wire.SubscriptionStatusPastDue {
			t.Fatalf("after the hard decline: %s", got.Status)
		}
		invID := *got.LatestInvoice
		subWantDunning(t, o, invID, "final", 1, nil)
		m := dunningMails(t, o, "Final notice", 1)[0]
		if !strings.Contains(m.Text, "can no longer be charged") {
			t.Fatalf("hard decline e-mail %s", m.Text)
		}
		clockAdvance(t, o.Test, 14*day-1)
		if st := subGet(t, o.Merchant, s.Id).Status; st != wire.SubscriptionStatusPastDue {
			t.Fatalf("before the window ends: %s", st)
		}
		clockAdvance(t, o.Test, 1)
		if st := subGet(t, o.Merchant, s.Id).Status; st != wire.SubscriptionStatusUnpaid {
			t.Fatalf("at the window's end: %s", st)
		}
		if inv := subInvoice(t, o, invID); inv.AttemptCount != 1 {
			t.Fatalf("a hard decline was retried: %d attempts", inv.AttemptCount)
		}
	})
}
