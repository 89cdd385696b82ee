package conformance

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// One renewal batch whose charges end differently: the subscriptions of one merchant whose
// periods end at the same instant are renewed together, and the outcome of each charge
// (succeeded, declined, authentication required, a SEPA debit processing) is applied to its
// own subscription, invoice, payment, events and e-mails and to no other.

// mixedPages reads every page of a list: page answers the page after the cursor (nil: the
// first), whether more follow, and the body of a failed answer; id is an object's id.
func mixedPages[T any](t *testing.T, what string, page func(after *string) ([]T, bool, []byte, error), id func(T) string) []T {
	t.Helper()
	var out []T
	var after *string
	for {
		data, more, body, err := page(after)
		if err != nil || data == nil && more {
			t.Fatalf("list %s: %v %s", what, err, body)
		}
		out = append(out, data...)
		if !more || len(data) == 0 {
			return out
		}
		after = ptr(id(data[len(data)-1]))
	}
}

// mixedAllEvents is every event of the merchant's test mode, oldest first.
func mixedAllEvents(t *testing.T, c *api.ClientWithResponses) []api.Event {
	t.Helper()
	out := mixedPages(t, "events", func(after *string) ([]api.Event, bool, []byte, error) {
		r, err := c.ListEventsWithResponse(context.Background(), &api.ListEventsParams{Limit: ptr(100), StartingAfter: after})
		if err != nil {
			return nil, true, nil, err
		}
		if r.JSON200 == nil {
			return nil, true, r.Body, nil
		}
		return r.JSON200.Data, r.JSON200.HasMore, nil, nil
	}, func(e api.Event) string { return e.Id })
	slices.Reverse(out)
	return out
}

// mixedAllInvoices is every invoice of o's test mode.
func mixedAllInvoices(t *testing.T, o *DashOwner) []dash.Invoice {
	t.Helper()
	return mixedPages(t, "invoices", func(after *string) ([]dash.Invoice, bool, []byte, error) {
		r, err := o.Client.ListInvoicesWithResponse(context.Background(), dashTest, &dash.ListInvoicesParams{Limit: ptr(100), StartingAfter: after})
		if err != nil {
			return nil, true, nil, err
		}
		if r.JSON200 == nil {
			return nil, true, r.Body, nil
		}
		return r.JSON200.Data, r.JSON200.HasMore, nil, nil
	}, func(i dash.Invoice) string { return i.Id })
}

// mixedAllPayments is every payment of o's test mode.
func mixedAllPayments(t *testing.T, o *DashOwner) []dash.Payment {
	t.Helper()
	return mixedPages(t, "payments", func(after *string) ([]dash.Payment, bool, []byte, error) {
		r, err := o.Client.ListPaymentsWithResponse(context.Background(), dashTest, &dash.ListPaymentsParams{Limit: ptr(100), StartingAfter: after})
		if err != nil {
			return nil, true, nil, err
		}
		if r.JSON200 == nil {
			return nil, true, r.Body, nil
		}
		return r.JSON200.Data, r.JSON200.HasMore, nil, nil
	}, func(p dash.Payment) string { return p.Id })
}

// mixedAllMail is every message of o's development mailbox.
func mixedAllMail(t *testing.T, o *DashOwner) []dash.MailboxMessage {
	t.Helper()
	return mixedPages(t, "mailbox", func(after *string) ([]dash.MailboxMessage, bool, []byte, error) {
		r, err := o.Client.ListMailboxWithResponse(context.Background(), &dash.ListMailboxParams{Limit: ptr(100), StartingAfter: after})
		if err != nil {
			return nil, true, nil, err
		}
		if r.JSON200 == nil {
			return nil, true, r.Body, nil
		}
		return r.JSON200.Data, r.JSON200.HasMore, nil, nil
	}, func(m dash.MailboxMessage) string { return m.Id })
}

// mixedMailTo waits until the mailbox holds, for each address of want, at least the given
// number of messages whose subject contains its part, and returns the mailbox's messages
// grouped by address.
func mixedMailTo(t *testing.T, o *DashOwner, want map[string]int, part func(to string) string) map[string][]dash.MailboxMessage {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		by := map[string][]dash.MailboxMessage{}
		for _, m := range mixedAllMail(t, o) {
			by[m.To] = append(by[m.To], m)
		}
		done := true
		for to, n := range want {
			got := 0
			for _, m := range by[to] {
				if strings.Contains(m.Subject, part(to)) {
					got++
				}
			}
			done = done && got >= n
		}
		if done || time.Now().After(deadline) {
			return by
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// mixedEventsOf is the types of the events in evs about subscription sub or invoice inv
// (data.object.id, or data.object.invoice_id for a payment), oldest first.
func mixedEventsOf(evs []api.Event, sub, inv string) []string {
	var out []string
	for _, e := range evs {
		id, _ := e.Data.Object["id"].(string)
		iid, _ := e.Data.Object["invoice_id"].(string)
		if id == sub || id == inv || iid == inv {
			out = append(out, e.Type)
		}
	}
	return out
}

var mixedNumberRE = regexp.MustCompile(`-INV-([0-9]+)-([0-9]+)$`)

func TestSubscriptionsMixedBatch(t *testing.T) {
	t.Parallel()
	const day = int64(86400)

	harness.Rule(t, "D14", "a renewal batch whose charges end differently applies each outcome to its own subscription: paid and renewed with its receipt, declined into dunning, authentication required sent to the hosted invoice page, SEPA processing then paid; each renewal's events once and in order, invoice numbers gap-free (test clock)", func(t *testing.T) {
		t.Parallel()
		o := subFrozenOwner(t)
		t0 := clockGet(t, o.Test).Now
		end := subNextMonth(t0)
		if (end-t0)%day != 0 {
			t.Fatalf("a month from %d is no whole number of days", t0)
		}
		price := subPrice(t, o.Merchant, 900, nil)

		// Every subscription has a trial ending at end, so that the whole batch falls due
		// alike: the due work is claimed in due order, and a run of renewals is renewed
		// together, then the charges due at the same instant are made together (a renewal
		// without a trial beside them would be due in another round). The trial's end is the
		// first renewal. O: 4242 (succeeds); D: 4000000000000341 (saved, declines
		// off-session); A: 4000002760003184 (saved through its challenge, declines
		// authentication_required off-session); S: a SEPA debit. Interleaved, all made at t0.
		const kinds = "ODOAOSODOAOOSDOOAOSDOOODOA"
		type sub struct {
			kind  byte
			email string
			s     api.Subscription
		}
		subs := make([]sub, len(kinds))
		for i := range kinds {
			k := kinds[i]
			b := subBody(price.Id)
			b["customer_email"] = fmt.Sprintf("mixed%02d@example.com", i)
			b["trial_days"] = (end - t0) / day
			s := subCreate(t, o.Merchant, b)
			id, secret := subPI(t, s)
			var v *capi.BuyerPaymentIntent
			switch k {
			case 'O':
				v = subConfirm(t, secret, id, payCard(payCardOK)).JSON200
			case 'D':
				v = subConfirm(t, secret, id, payCard("4000000000000341")).JSON200
			case 'A':
				subWaiting3DS(t, s)
				v = subAction(t, secret, id, true).JSON200
			case 'S':
				v = subConfirm(t, secret, id, paySEPA(payIBANOK)).JSON200
			}
			if g := subGet(t, o.Merchant, s.Id); v == nil || v.SubscriptionStatus != "trialing" || g.Status != wire.SubscriptionStatusTrialing ||
				g.CurrentPeriodEnd != end || g.TrialEnd == nil || *g.TrialEnd != end || g.LatestInvoice != nil || g.DefaultPaymentMethod == nil {
				t.Fatalf("subscription %d (%c) before the batch: confirmation %+v, %+v", i, k, v, g)
			}
			subs[i] = sub{kind: k, email: b["customer_email"].(string), s: s}
		}
		before := map[string]bool{}
		for _, e := range mixedAllEvents(t, o.Test) {
			before[e.Id] = true
		}

		// One advance past the period end: one batch. The SEPA debits settle two minutes
		// after it, so a minute later they are processing.
		clockAdvance(t, o.Test, end+60-t0)

		renewal := map[string]string{}
		for i, x := range subs {
			g := subGet(t, o.Merchant, x.s.Id)
			if g.LatestInvoice == nil {
				t.Fatalf("subscription %d (%c) has no renewal invoice: %+v", i, x.kind, g)
			}
			renewal[x.s.Id] = *g.LatestInvoice
			if g.CurrentPeriodStart != end || g.CurrentPeriodEnd != subNextMonth(end) {
				t.Fatalf("subscription %d (%c): period %d–%d, want %d–%d", i, x.kind, g.CurrentPeriodStart, g.CurrentPeriodEnd, end, subNextMonth(end))
			}
			inv := subInvoice(t, o, *g.LatestInvoice)
			if inv.TotalAmount != 900 || inv.Subscription == nil || *inv.Subscription != x.s.Id || inv.Number == nil ||
				inv.IssueDate == nil || *inv.IssueDate != end {
				t.Fatalf("renewal invoice of %d (%c): %+v", i, x.kind, inv)
			}
			switch x.kind {
			case 'O':
				if g.Status != wire.SubscriptionStatusActive || inv.Status != wire.InvoiceStatusPaid || inv.DunningStage != nil {
					t.Fatalf("succeeded renewal %d (%c): subscription %s, invoice %+v", i, x.kind, g.Status, inv)
				}
				if p := subPaymentOf(t, o, inv); p.InvoiceId == nil || *p.InvoiceId != inv.Id || p.Amount != 900 ||
					p.Status != wire.PaymentStatusSucceeded || p.Created != end {
					t.Fatalf("payment of renewal %d (%c): %+v", i, x.kind, p)
				}
			case 'D', 'A':
				if g.Status != wire.SubscriptionStatusPastDue {
					t.Fatalf("failed renewal %d (%c): subscription %s", i, x.kind, g.Status)
				}
				next := end + 3*day // neither is a hard decline: the schedule goes on
				subWantDunning(t, o, inv.Id, "notice", 1, &next)
			case 'S':
				if g.Status != wire.SubscriptionStatusTrialing || inv.Status != wire.InvoiceStatusOpen || inv.DunningStage != nil || inv.AttemptCount > 1 {
					t.Fatalf("processing SEPA renewal %d (%c): subscription %s, invoice %+v", i, x.kind, g.Status, inv)
				}
			}
		}

		// While the debits are processing nothing says a SEPA renewal was paid.
		processing := mixedAllEvents(t, o.Test)
		for i, x := range subs {
			if x.kind != 'S' {
				continue
			}
			if got := mixedEventsOf(processing, x.s.Id, renewal[x.s.Id]); slices.Contains(got, "invoice.paid") ||
				slices.Contains(got, "invoice.payment_succeeded") || slices.Contains(got, "invoice.payment_failed") {
				t.Fatalf("events of SEPA renewal %d while processing: %v", i, got)
			}
		}

		// The settle time: the SEPA renewals are paid.
		clockAdvance(t, o.Test, 60)
		for i, x := range subs {
			if x.kind != 'S' {
				continue
			}
			g := subGet(t, o.Merchant, x.s.Id)
			inv := subInvoice(t, o, renewal[x.s.Id])
			if g.Status != wire.SubscriptionStatusActive || inv.Status != wire.InvoiceStatusPaid || *g.LatestInvoice != inv.Id {
				t.Fatalf("settled SEPA renewal %d (%c): subscription %s, invoice %+v", i, x.kind, g.Status, inv)
			}
			if p := subPaymentOf(t, o, inv); p.InvoiceId == nil || *p.InvoiceId != inv.Id || p.Amount != 900 ||
				p.Status != wire.PaymentStatusSucceeded || p.PaymentMethod != "sepa_debit" {
				t.Fatalf("payment of SEPA renewal %d: %+v", i, p)
			}
		}

		// Payments: one succeeded payment per paid renewal, none for a failed one.
		succeeded := map[string]int{}
		for _, p := range mixedAllPayments(t, o) {
			if p.InvoiceId != nil && p.Status == wire.PaymentStatusSucceeded {
				succeeded[*p.InvoiceId]++
			}
		}
		for i, x := range subs {
			want := 1
			if x.kind == 'D' || x.kind == 'A' {
				want = 0
			}
			if n := succeeded[renewal[x.s.Id]]; n != want {
				t.Fatalf("renewal %d (%c): %d succeeded payments, want %d", i, x.kind, n, want)
			}
		}

		// Each renewal's events once, in the documented order.
		var after []api.Event
		for _, e := range mixedAllEvents(t, o.Test) {
			if !before[e.Id] {
				after = append(after, e)
			}
		}
		for i, x := range subs {
			want := []string{"customer.subscription.trial_will_end", "invoice.finalized"}
			switch x.kind {
			case 'O', 'S':
				want = append(want, "payment_intent.succeeded", "invoice.payment_succeeded", "invoice.paid", "customer.subscription.updated")
			case 'D', 'A':
				want = append(want, "payment_intent.payment_failed", "invoice.payment_failed", "customer.subscription.updated")
			}
			if got := mixedEventsOf(after, x.s.Id, renewal[x.s.Id]); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("events of renewal %d (%c): %v, want %v", i, x.kind, got, want)
			}
		}

		// E-mails: a receipt for each paid renewal (with its payment), the dunning notice with
		// the hosted invoice link for each failed one; the one asking for authentication
		// sends the customer to confirm the payment there.
		wantMail := map[string]int{}
		kindOf := map[string]byte{}
		for _, x := range subs {
			wantMail[x.email] = 1
			kindOf[x.email] = x.kind
		}
		mail := mixedMailTo(t, o, wantMail, func(to string) string {
			if k := kindOf[to]; k == 'D' || k == 'A' {
				return "Payment failed"
			}
			return "Your receipt from"
		})
		for i, x := range subs {
			inv := subInvoice(t, o, renewal[x.s.Id])
			var receipts, notices []dash.MailboxMessage
			for _, m := range mail[x.email] {
				switch {
				case strings.Contains(m.Subject, "Your receipt from"):
					receipts = append(receipts, m)
				case strings.Contains(m.Subject, "Payment failed"):
					notices = append(notices, m)
				}
			}
			switch x.kind {
			case 'O', 'S':
				pid := *inv.PaymentId
				n := 0
				for _, m := range receipts {
					if strings.Contains(m.Text, pid) {
						n++
					}
				}
				if n != 1 || len(notices) != 0 {
					t.Fatalf("renewal %d (%c): %d receipts for payment %s, %d dunning notices; want one receipt, no notice", i, x.kind, n, pid, len(notices))
				}
			case 'D', 'A':
				if len(receipts) != 0 || len(notices) != 1 {
					t.Fatalf("renewal %d (%c): %d receipts, %d dunning notices; want none and one", i, x.kind, len(receipts), len(notices))
				}
				m := notices[0]
				if !strings.Contains(m.Text, *inv.HostedInvoiceUrl) || !strings.Contains(m.Text, "9.00 EUR") || !strings.Contains(m.Text, *inv.Number) {
					t.Fatalf("dunning notice of renewal %d (%c): %s", i, x.kind, m.Text)
				}
				auth := strings.Contains(m.Text, "confirm the payment") && strings.Contains(m.Text, "3-D Secure") && !strings.Contains(m.Text, "another card")
				if auth != (x.kind == 'A') {
					t.Fatalf("dunning notice of renewal %d (%c) asks for authentication: %v; text %s", i, x.kind, auth, m.Text)
				}
			}
		}

		// Invoice numbers: unique and, per year, 1…n without a gap.
		seen := map[string]bool{}
		perYear := map[string][]int{}
		for _, inv := range mixedAllInvoices(t, o) {
			if inv.Number == nil {
				continue
			}
			if seen[*inv.Number] {
				t.Fatalf("invoice number %s twice", *inv.Number)
			}
			seen[*inv.Number] = true
			m := mixedNumberRE.FindStringSubmatch(*inv.Number)
			if m == nil {
				t.Fatalf("invoice number %q", *inv.Number)
			}
			n, _ := strconv.Atoi(m[2])
			perYear[m[1]] = append(perYear[m[1]], n)
		}
		numbered := 0
		for _, ns := range perYear {
			slices.Sort(ns)
			for j, n := range ns {
				if n != j+1 {
					t.Fatalf("invoice numbers %v: want 1…%d without a gap", ns, len(ns))
				}
			}
			numbered += len(ns)
		}
		if numbered != len(subs) {
			t.Fatalf("%d numbered invoices, want one per renewal: %d", numbered, len(subs))
		}
	})
}
