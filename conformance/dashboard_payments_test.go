package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func TestDashboardPayments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "DASH", "the overview counts the environment's payments, gross per currency, open sessions and recent payments", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		first := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		second := dashPay(t, o.Merchant, 1200, "eur", payCardOK)
		open := csCreate(t, o.Test, sessionBody())
		r, err := o.Client.GetOverviewWithResponse(ctx, dash.DashboardEnvironmentTest)
		if err != nil {
			t.Fatal(err)
		}
		ov := r.JSON200
		if ov == nil {
			t.Fatalf("overview: %d %s", r.StatusCode(), r.Body)
		}
		if ov.Environment != dash.DashboardEnvironmentTest || ov.Payments.Count != 2 || ov.Payments.SucceededCount != 2 ||
			len(ov.Payments.Gross) != 1 || ov.Payments.Gross[0] != (dash.Money{Currency: "EUR", Amount: 3700}) ||
			ov.OpenSessionsCount != 1 || ov.WebhookEndpointsCount != 0 {
			t.Fatalf("overview %s", r.Body)
		}
		if len(ov.RecentPayments) != 2 || ov.RecentPayments[0].Id != second.Payment.Id || ov.RecentPayments[1].Id != first.Payment.Id {
			t.Fatalf("recent payments %s", r.Body)
		}
		_ = open
		live, err := o.Client.GetOverviewWithResponse(ctx, dash.DashboardEnvironmentLive)
		if err != nil {
			t.Fatal(err)
		}
		if live.JSON200 == nil || live.JSON200.Payments.Count != 0 || live.JSON200.OpenSessionsCount != 0 || len(live.JSON200.RecentPayments) != 0 {
			t.Fatalf("live overview shows test data: %s", live.Body)
		}
	})

	harness.Rule(t, "DASH", "the payments list pages newest first and filters by status", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		a := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		b := dashPay(t, o.Merchant, 3000, "eur", payCardOK)
		limit := 1
		r, err := o.Client.ListPaymentsWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListPaymentsParams{Limit: &limit})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Id != b.Payment.Id || !r.JSON200.HasMore ||
			r.JSON200.Object != wire.ListObjectList || r.JSON200.Url != "/api/v1/test/payments" {
			t.Fatalf("first page: %d %s", r.StatusCode(), r.Body)
		}
		after := b.Payment.Id
		r, err = o.Client.ListPaymentsWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListPaymentsParams{Limit: &limit, StartingAfter: &after})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Id != a.Payment.Id || r.JSON200.HasMore {
			t.Fatalf("second page: %d %s", r.StatusCode(), r.Body)
		}
		p := r.JSON200.Data[0]
		if p.Amount != 2500 || p.Currency != "EUR" || p.Status != "succeeded" || p.SessionId == nil || *p.SessionId != a.Id ||
			p.Card == nil || p.Card.Last4 != "4242" {
			t.Fatalf("payment shape %+v", p)
		}
		for status, want := range map[dash.PaymentStatusFilter]int{"succeeded": 2, "failed": 0, "processing": 0} {
			st := status
			r, err := o.Client.ListPaymentsWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListPaymentsParams{Status: &st})
			if err != nil {
				t.Fatal(err)
			}
			if r.JSON200 == nil || len(r.JSON200.Data) != want {
				t.Fatalf("status %s: %d %s", status, r.StatusCode(), r.Body)
			}
		}
		bad := dashRaw(t, http.MethodGet, "/api/v1/test/payments?status=paid", o.sessionToken(t), "", nil)
		wantError(t, bad.Status, bad.Header, bad.Body, 400, "invalid_request", "status_invalid", "status")
	})

	harness.Rule(t, "DASH", "a payment's detail has its fee breakdown and the events of the payment and its session", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		r, err := o.Client.GetPaymentWithResponse(ctx, dash.DashboardEnvironmentTest, s.Payment.Id)
		if err != nil {
			t.Fatal(err)
		}
		d := r.JSON200
		if d == nil {
			t.Fatalf("detail: %d %s", r.StatusCode(), r.Body)
		}
		fee, fb := s.Payment.Fee, d.FeeBreakdown
		if d.Payment.Id != s.Payment.Id || fb.TotalEur != fee.ServiceFeeEur || fb.PspEur != fee.PspFeeEur ||
			fb.ServiceEur+fb.PspEur != fb.TotalEur || fb.ServiceChargeCurrency != fee.ServiceFeeChargeCurrency ||
			fb.ChargeCurrency != "EUR" || fb.Rate != "1" || fb.NetAmount != 2500-fee.ServiceFeeChargeCurrency {
			t.Fatalf("fee breakdown %s for fee %+v", r.Body, fee)
		}
		// The sandbox's 4242… is a US card, so non-EEA: 2.8% of 25.00 EUR + 0.25 = 0.95 EUR (D7).
		if s.Payment.Card == nil || s.Payment.Card.Country != "US" || fb.TotalEur != 95 {
			t.Fatalf("fee = %d EUR cents for card %+v, want 95 for a US card", fb.TotalEur, s.Payment.Card)
		}
		var completed bool
		for _, e := range d.Events {
			id, _ := e.Data.Object["id"].(string)
			if id != s.Id && id != s.Payment.Id {
				t.Fatalf("event %s about %q, neither the payment nor its session", e.Id, id)
			}
			completed = completed || e.Type == "checkout.session.completed"
		}
		if !completed {
			t.Fatalf("no checkout.session.completed among %s", r.Body)
		}
	})

	harness.Rule(t, "ISO", "the dashboard shows a payment only to its merchant and only in its environment", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		other := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		for _, c := range []struct {
			who *DashOwner
			env dash.DashboardEnvironment
		}{{other, dash.DashboardEnvironmentTest}, {o, dash.DashboardEnvironmentLive}} {
			r, err := c.who.Client.GetPaymentWithResponse(ctx, c.env, s.Payment.Id)
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "payment_not_found", "id")
		}
		list, err := other.Client.ListPaymentsWithResponse(ctx, dash.DashboardEnvironmentTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if list.JSON200 == nil || len(list.JSON200.Data) != 0 {
			t.Fatalf("other merchant's list: %s", list.Body)
		}
	})

	harness.Rule(t, "DASH", "the checkout sessions list shows the environment's sessions and filters by status", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		paid := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		open := csCreate(t, o.Test, sessionBody())
		r, err := o.Client.ListCheckoutSessionsWithResponse(ctx, dash.DashboardEnvironmentTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 2 || r.JSON200.Data[0].Id != open.Id || r.JSON200.Data[1].Id != paid.Id ||
			r.JSON200.Data[1].Payment == nil {
			t.Fatalf("sessions: %d %s", r.StatusCode(), r.Body)
		}
		st := dash.CheckoutSessionStatus("open")
		r, err = o.Client.ListCheckoutSessionsWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListCheckoutSessionsParams{Status: &st})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Id != open.Id {
			t.Fatalf("open sessions: %s", r.Body)
		}
		live, err := o.Client.ListCheckoutSessionsWithResponse(ctx, dash.DashboardEnvironmentLive, nil)
		if err != nil || live.JSON200 == nil || len(live.JSON200.Data) != 0 {
			t.Fatalf("live sessions: %v %s", err, live.Body)
		}
	})

	harness.Rule(t, "DASH", "an environment other than test or live is 400 env_invalid", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		r := dashRaw(t, http.MethodGet, "/api/v1/prod/payments", o.sessionToken(t), "", nil)
		wantError(t, r.Status, r.Header, r.Body, 400, "invalid_request", "env_invalid", "env")
	})

	harness.Rule(t, "DASH", "the test mailbox shows the receipt of a test payment, and only to its merchant", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		other := newDashOwner(t)
		s := dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		// Receipts leave through the mail outbox after the commit: wait for it.
		deadline := time.Now().Add(20 * time.Second)
		var found *dash.MailboxMessage
		for found == nil && time.Now().Before(deadline) {
			mb, err := o.Client.ListMailboxWithResponse(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if mb.JSON200 == nil {
				t.Fatalf("mailbox: %d %s", mb.StatusCode(), mb.Body)
			}
			for i, m := range mb.JSON200.Data {
				if m.To == s.CustomerEmail {
					found = &mb.JSON200.Data[i]
				}
			}
			if found == nil {
				time.Sleep(200 * time.Millisecond)
			}
		}
		if found == nil {
			t.Fatal("no receipt in the test mailbox within 20 s")
		}
		if !strings.HasPrefix(found.Id, "msg_") || found.Subject == "" || !strings.Contains(found.Text, "4242") {
			t.Fatalf("receipt %+v", found)
		}
		theirs, err := other.Client.ListMailboxWithResponse(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if theirs.JSON200 == nil || len(theirs.JSON200.Data) != 0 {
			t.Fatalf("another merchant's mailbox: %s", theirs.Body)
		}
	})

	harness.Rule(t, "DASH", "event types are the merchant webhook catalog; the test mailbox answers a list", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		r, err := o.Client.ListEventTypesWithResponse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) < 5 || r.JSON200.Data[0] != "checkout.session.completed" {
			t.Fatalf("event types: %d %s", r.StatusCode(), r.Body)
		}
		mb, err := o.Client.ListMailboxWithResponse(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if mb.JSON200 == nil || mb.JSON200.Url != "/api/v1/test/mailbox" {
			t.Fatalf("mailbox: %d %s", mb.StatusCode(), mb.Body)
		}
	})
}
