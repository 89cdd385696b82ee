package conformance

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

var (
	subIDRE = regexp.MustCompile(`^sub_[0-9A-Za-z]{24}$`)
	cusIDRE = regexp.MustCompile(`^cus_[0-9A-Za-z]{24}$`)
)

// subPrice creates a recurring EUR price of unitAmount every month (or with rec's fields).
func subPrice(t *testing.T, m *Merchant, unitAmount int64, rec *api.RecurringParams) api.Price {
	t.Helper()
	if rec == nil {
		rec = &api.RecurringParams{Interval: wire.RecurringIntervalMonth}
	}
	p := catProduct(t, m.Test, "Plan")
	return catCreatePrice(t, m.Test, p.Id, api.PriceCreate{Currency: "eur", UnitAmount: unitAmount, Recurring: rec})
}

func subBody(priceID string) map[string]any {
	return map[string]any{"price_id": priceID, "customer_name": "Ada Lovelace", "customer_email": "ada@example.com"}
}

// subCreate creates a subscription from body and returns it.
func subCreate(t *testing.T, m *Merchant, body map[string]any) api.Subscription {
	t.Helper()
	return catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions", body))
}

func subGet(t *testing.T, m *Merchant, id string) api.Subscription {
	t.Helper()
	return catDecode[api.Subscription](t, catGet(t, m.TestKey, "/v1/subscriptions/"+id, nil))
}

// subEvents returns the types of the merchant's events about subscription id, oldest first.
func subEvents(t *testing.T, m *Merchant, id string) []string {
	t.Helper()
	return invoiceEvents(t, m.Test, id)
}

func subWantEvents(t *testing.T, m *Merchant, id string, want ...string) {
	t.Helper()
	if got := subEvents(t, m, id); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events of %s: %v, want %v", id, got, want)
	}
}

func TestSubscriptionsCreateRules(t *testing.T) {
	t.Parallel()
	harness.Section("D14", "Subscriptions (merchant API)")

	harness.Rule(t, "D14", "every field of the create body is checked, with its param", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		with := func(kv ...any) map[string]any {
			b := subBody(pr.Id)
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == nil {
					delete(b, kv[i].(string))
				} else {
					b[kv[i].(string)] = kv[i+1]
				}
			}
			return b
		}
		meta := map[string]string{}
		for i := range 51 {
			meta["k"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
		}
		cases := []struct {
			name             string
			body             map[string]any
			typ, code, param string
		}{
			{"price_id missing", with("price_id", nil), "invalid_request", "parameter_missing", "price_id"},
			{"customer_name missing", with("customer_name", nil), "invalid_request", "parameter_missing", "customer_name"},
			{"customer_email missing", with("customer_email", nil), "invalid_request", "parameter_missing", "customer_email"},
			{"customer_name of 1 character", with("customer_name", "A"), "invalid_request", "customer_name_invalid", "customer_name"},
			{"customer_name of 121 characters", with("customer_name", strings.Repeat("a", 121)), "invalid_request", "customer_name_invalid", "customer_name"},
			{"customer_email malformed", with("customer_email", "not-an-email"), "invalid_request", "customer_email_invalid", "customer_email"},
			{"quantity 0", with("quantity", 0), "invalid_request", "quantity_invalid", "quantity"},
			{"quantity 10,001", with("quantity", 10001), "invalid_request", "quantity_invalid", "quantity"},
			{"trial_days -1", with("trial_days", -1), "invalid_request", "trial_days_invalid", "trial_days"},
			{"trial_days 731", with("trial_days", 731), "invalid_request", "trial_days_invalid", "trial_days"},
			{"metadata of 51 keys", with("metadata", meta), "invalid_request", "metadata_invalid", "metadata"},
		}
		for _, c := range cases {
			r := catPost(t, m.TestKey, "/v1/subscriptions", c.body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
			}
			catWantErr(t, r, http.StatusBadRequest, c.typ, c.code, c.param)
		}
		// The limits themselves are accepted.
		for _, b := range []map[string]any{with("customer_name", "Al"), with("customer_name", strings.Repeat("a", 120)),
			with("quantity", 10000), with("quantity", 1), with("trial_days", 730), with("trial_days", 0)} {
			subCreate(t, m, b)
		}
	})

	harness.Rule(t, "D14", "unit_amount × quantity above 99,999,999 is 400 amount_too_large/amount_above_maximum at quantity", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 50_000_000, nil)
		b := subBody(pr.Id)
		b["quantity"] = 2
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions", b), http.StatusBadRequest, "amount_too_large", "amount_above_maximum", "quantity")
		b["quantity"] = 1
		if s := subCreate(t, m, b); s.Amount != 50_000_000 {
			t.Fatalf("amount %d", s.Amount)
		}
	})

	harness.Rule(t, "4.2", "an unknown price, or another merchant's, is 404 price_not_found at price_id", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, true), newMerchant(t, true)
		foreign := subPrice(t, other, 900, nil)
		for _, id := range []string{"price_000000000000000000000000", foreign.Id} {
			catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions", subBody(id)), http.StatusNotFound, "not_found", "price_not_found", "price_id")
		}
		// The test price does not exist in live either.
		mine := subPrice(t, m, 900, nil)
		catWantErr(t, catPost(t, m.LiveKey, "/v1/subscriptions", subBody(mine.Id)), http.StatusNotFound, "not_found", "price_not_found", "price_id")
	})

	harness.Rule(t, "4.2", "a price without recurring.interval is 400 invalid_request/price_not_recurring at price_id", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		p := catCreateProduct(t, m.Test, api.ProductCreate{Name: "Once", Price: &api.PriceCreateInline{Currency: "eur", UnitAmount: 900}})
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions", subBody(p.Prices[0].Id)), http.StatusBadRequest, "invalid_request", "price_not_recurring", "price_id")
	})

	harness.Rule(t, "D14", "an archived price is 400 invalid_request/price_inactive at price_id", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		catUpdatePrice(t, m.Test, pr.Product, pr.Id, api.PriceUpdate{Active: ptr(false)})
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions", subBody(pr.Id)), http.StatusBadRequest, "invalid_request", "price_inactive", "price_id")
	})

	harness.Rule(t, "D14", "a metered price is 400 invalid_request/price_metered_unsupported at price_id", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, UsageType: ptr(wire.UsageTypeMetered)})
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions", subBody(pr.Id)), http.StatusBadRequest, "invalid_request", "price_metered_unsupported", "price_id")
	})

	harness.Rule(t, "D14", "live and not onboarded is 409 resource_conflict/merchant_not_ready", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		catWantErr(t, catPost(t, m.LiveKey, "/v1/subscriptions", subBody("price_000000000000000000000000")), http.StatusConflict, "resource_conflict", "merchant_not_ready", "")
	})
}

func TestSubscriptionsLifecycle(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "3.4", "POST /v1/subscriptions gives an incomplete subscription anchored at creation, and customer.subscription.created", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		now := clockFreeze(t, m.Test)
		pr := subPrice(t, m, 900, nil)
		b := subBody(pr.Id)
		b["quantity"], b["metadata"] = 3, map[string]string{"account": "acct-1"}
		s := subCreate(t, m, b)
		if !subIDRE.MatchString(s.Id) || s.Object != wire.SubscriptionObjectSubscription || s.Status != wire.SubscriptionStatusIncomplete ||
			!cusIDRE.MatchString(s.Customer) || s.PriceId != pr.Id || s.Quantity != 3 || s.Amount != 2700 || s.Currency != "EUR" ||
			s.TrialEnd != nil || s.CancelAtPeriodEnd || s.CanceledAt != nil || s.EndedAt != nil || s.DefaultPaymentMethod != nil ||
			s.Metadata["account"] != "acct-1" || s.Created != now {
			t.Fatalf("subscription %+v", s)
		}
		if s.CurrentPeriodStart != now || s.CurrentPeriodEnd != subNextMonth(now) {
			t.Fatalf("period %d–%d, created %d", s.CurrentPeriodStart, s.CurrentPeriodEnd, now)
		}
		if got := subGet(t, m, s.Id); got.Id != s.Id || got.Status != s.Status || got.CurrentPeriodEnd != s.CurrentPeriodEnd {
			t.Fatalf("retrieved %+v", got)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created")
	})

	harness.Rule(t, "D14", "trial_days absent takes the price's trial; 0 means none; the first period ends at trial_end", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		now := clockFreeze(t, m.Test)
		pr := subPrice(t, m, 900, &api.RecurringParams{Interval: wire.RecurringIntervalMonth, TrialPeriodDays: ptr(14)})
		s := subCreate(t, m, subBody(pr.Id))
		if s.TrialEnd == nil || *s.TrialEnd != now+14*86400 || s.CurrentPeriodEnd != *s.TrialEnd {
			t.Fatalf("price trial: %+v", s)
		}
		b := subBody(pr.Id)
		b["trial_days"] = 0
		if s := subCreate(t, m, b); s.TrialEnd != nil {
			t.Fatalf("trial_days 0: trial_end %d", *s.TrialEnd)
		}
		b["trial_days"] = 7
		if s := subCreate(t, m, b); s.TrialEnd == nil || *s.TrialEnd != now+7*86400 {
			t.Fatalf("trial_days 7: %+v", s)
		}
	})

	harness.Rule(t, "D8", "customers are found by customer_email within the merchant and environment", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, true), newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		a := subCreate(t, m, subBody(pr.Id))
		b := subBody(pr.Id)
		b["customer_email"], b["customer_name"] = "ADA@example.com", "Ada L."
		if again := subCreate(t, m, b); again.Customer != a.Customer {
			t.Fatalf("same e-mail, other customer: %s and %s", a.Customer, again.Customer)
		}
		b["customer_email"] = "grace@example.com"
		if g := subCreate(t, m, b); g.Customer == a.Customer {
			t.Fatalf("another e-mail found the same customer")
		}
		op := subPrice(t, other, 900, nil)
		if o := subCreate(t, other, subBody(op.Id)); o.Customer == a.Customer {
			t.Fatalf("another merchant shares the customer")
		}
	})

	harness.Rule(t, "3.4", "an incomplete subscription becomes incomplete_expired 23 hours after creation (test clock), with customer.subscription.updated", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		pr := subPrice(t, m, 900, nil)
		s := subCreate(t, m, subBody(pr.Id))
		clockAdvance(t, m.Test, 23*3600-1)
		if got := subGet(t, m, s.Id); got.Status != wire.SubscriptionStatusIncomplete {
			t.Fatalf("before 23 h: %s", got.Status)
		}
		clockAdvance(t, m.Test, 1)
		got := subGet(t, m, s.Id)
		if got.Status != wire.SubscriptionStatusIncompleteExpired || got.EndedAt == nil || *got.EndedAt != s.Created+23*3600 {
			t.Fatalf("after 23 h: %+v", got)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{}), http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
	})

	harness.Rule(t, "3.4", "cancelling an incomplete subscription ends it at once, even at_period_end; canceled again is 409 subscription_already_canceled", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		now := clockFreeze(t, m.Test)
		pr := subPrice(t, m, 900, nil)
		for _, body := range []string{"", `{"at_period_end": true}`, `{"at_period_end": false}`} {
			s := subCreate(t, m, subBody(pr.Id))
			r := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/cancel", m.TestKey, body, nil)
			got := catDecode[api.Subscription](t, r)
			if got.Status != wire.SubscriptionStatusCanceled || got.EndedAt == nil || *got.EndedAt != now || got.CanceledAt == nil || got.CancelAtPeriodEnd {
				t.Fatalf("cancel with %q: %+v", body, got)
			}
			subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.deleted")
			for _, again := range []string{`{"at_period_end": true}`, `{"at_period_end": false}`} {
				r := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/cancel", m.TestKey, again, nil)
				catWantErr(t, r, http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
			}
		}
	})

	harness.Rule(t, "D14", "update merges metadata, refuses cancel_at_period_end on an incomplete subscription and any change once canceled", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		b := subBody(pr.Id)
		b["metadata"] = map[string]string{"a": "1", "b": "2"}
		s := subCreate(t, m, b)
		u := catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id, map[string]any{"metadata": map[string]string{"a": "", "c": "3"}}))
		if len(u.Metadata) != 2 || u.Metadata["b"] != "2" || u.Metadata["c"] != "3" {
			t.Fatalf("metadata %v", u.Metadata)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
		// A body that changes nothing fires nothing.
		catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id, map[string]any{"cancel_at_period_end": false}))
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated")
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id, map[string]any{"cancel_at_period_end": true}),
			http.StatusBadRequest, "invalid_request", "cancel_at_period_end_invalid", "cancel_at_period_end")
		// A plan change of an incomplete subscription is refused (it has no period to prorate).
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id, map[string]any{"price_id": pr.Id, "quantity": 2}),
			http.StatusConflict, "resource_conflict", "subscription_incomplete", "")
		catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id+"/cancel", map[string]any{"at_period_end": false}))
		catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+s.Id, map[string]any{"metadata": map[string]string{"d": "4"}}),
			http.StatusConflict, "resource_conflict", "subscription_already_canceled", "")
	})
}

func TestSubscriptionsReadAndList(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "4.2", "an unknown or foreign subscription is 404 subscription_not_found, on every endpoint", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, true), newMerchant(t, true)
		pr := subPrice(t, other, 900, nil)
		foreign := subCreate(t, other, subBody(pr.Id))
		for _, id := range []string{"sub_000000000000000000000000", foreign.Id} {
			catWantErr(t, catGet(t, m.TestKey, "/v1/subscriptions/"+id, nil), http.StatusNotFound, "not_found", "subscription_not_found", "id")
			catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+id+"/cancel", map[string]any{}), http.StatusNotFound, "not_found", "subscription_not_found", "id")
			catWantErr(t, catPost(t, m.TestKey, "/v1/subscriptions/"+id, map[string]any{"metadata": map[string]string{"a": "b"}}), http.StatusNotFound, "not_found", "subscription_not_found", "id")
		}
		// The test subscription is not seen with the live key.
		catWantErr(t, catGet(t, other.LiveKey, "/v1/subscriptions/"+foreign.Id, nil), http.StatusNotFound, "not_found", "subscription_not_found", "id")
		if got := subGet(t, other, foreign.Id); got.Status != wire.SubscriptionStatusIncomplete {
			t.Fatalf("another merchant's cancel changed it: %s", got.Status)
		}
	})

	harness.Rule(t, "D8", "subscriptions are listed newest first with cursors and filtered by status, customer and price", func(t *testing.T) {
		t.Parallel()
		m, other := newMerchant(t, true), newMerchant(t, true)
		monthly := subPrice(t, m, 900, nil)
		yearly := subPrice(t, m, 9000, &api.RecurringParams{Interval: wire.RecurringIntervalYear})
		var ids []string
		for i := range 5 {
			b := subBody(monthly.Id)
			if i%2 == 1 {
				b = subBody(yearly.Id)
				b["customer_email"] = "grace@example.com"
			}
			ids = append(ids, subCreate(t, m, b).Id)
		}
		subCreate(t, other, subBody(subPrice(t, other, 900, nil).Id))
		catDecode[api.Subscription](t, catPost(t, m.TestKey, "/v1/subscriptions/"+ids[0]+"/cancel", map[string]any{}))
		list := func(q url.Values) api.SubscriptionList {
			t.Helper()
			return catDecode[api.SubscriptionList](t, catGet(t, m.TestKey, "/v1/subscriptions", q))
		}
		idsOf := func(l api.SubscriptionList) []string {
			var out []string
			for _, s := range l.Data {
				out = append(out, s.Id)
			}
			return out
		}
		all := list(nil)
		if all.Object != wire.ListObjectList || all.Url != "/v1/subscriptions" || all.HasMore {
			t.Fatalf("list %+v", all)
		}
		catSameIDs(t, "all", idsOf(all), []string{ids[4], ids[3], ids[2], ids[1], ids[0]})
		p1 := list(url.Values{"limit": {"2"}})
		catSameIDs(t, "page 1", idsOf(p1), []string{ids[4], ids[3]})
		if !p1.HasMore {
			t.Fatal("page 1 has_more false")
		}
		catSameIDs(t, "page 2", idsOf(list(url.Values{"limit": {"2"}, "starting_after": {ids[3]}})), []string{ids[2], ids[1]})
		catSameIDs(t, "before", idsOf(list(url.Values{"limit": {"2"}, "ending_before": {ids[1]}})), []string{ids[3], ids[2]})
		catSameIDs(t, "price", idsOf(list(url.Values{"price": {yearly.Id}})), []string{ids[3], ids[1]})
		cus := subGet(t, m, ids[1]).Customer
		catSameIDs(t, "customer", idsOf(list(url.Values{"customer": {cus}})), []string{ids[3], ids[1]})
		catSameIDs(t, "canceled", idsOf(list(url.Values{"status": {"canceled"}})), []string{ids[0]})
		catSameIDs(t, "incomplete monthly", idsOf(list(url.Values{"status": {"incomplete"}, "price": {monthly.Id}})), []string{ids[4], ids[2]})
		catWantErr(t, catGet(t, m.TestKey, "/v1/subscriptions", url.Values{"limit": {"101"}}), http.StatusBadRequest, "invalid_request", "limit_invalid", "limit")
		catWantErr(t, catGet(t, m.TestKey, "/v1/subscriptions", url.Values{"status": {"paused"}}), http.StatusBadRequest, "invalid_request", "status_invalid", "status")
		otherSub := catDecode[api.SubscriptionList](t, catGet(t, other.TestKey, "/v1/subscriptions", nil)).Data[0].Id
		catWantErr(t, catGet(t, m.TestKey, "/v1/subscriptions", url.Values{"starting_after": {otherSub}}), http.StatusBadRequest, "invalid_request", "starting_after_invalid", "starting_after")
		if l := catDecode[api.SubscriptionList](t, catGet(t, m.LiveKey, "/v1/subscriptions", nil)); len(l.Data) != 0 {
			t.Fatalf("live lists test subscriptions: %d", len(l.Data))
		}
	})
}

func TestSubscriptionsIdempotency(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "8", "replaying POST /v1/subscriptions with the same Idempotency-Key creates one subscription; another body is 409 idempotency_key_reused", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		key := map[string]string{"Idempotency-Key": "sub-" + m.ID}
		first := raw(t, http.MethodPost, "/v1/subscriptions", m.TestKey, rawJSON(t, subBody(pr.Id)), key)
		again := raw(t, http.MethodPost, "/v1/subscriptions", m.TestKey, rawJSON(t, subBody(pr.Id)), key)
		a, b := catDecode[api.Subscription](t, first), catDecode[api.Subscription](t, again)
		if a.Id != b.Id || again.Header.Get("Idempotent-Replayed") != "true" || string(first.Body) != string(again.Body) {
			t.Fatalf("replay %s / %s, replayed %q", a.Id, b.Id, again.Header.Get("Idempotent-Replayed"))
		}
		if l := catDecode[api.SubscriptionList](t, catGet(t, m.TestKey, "/v1/subscriptions", nil)); len(l.Data) != 1 {
			t.Fatalf("%d subscriptions after a replay", len(l.Data))
		}
		if n := len(subEvents(t, m, a.Id)); n != 1 {
			t.Fatalf("%d events after a replay", n)
		}
		other := subBody(pr.Id)
		other["quantity"] = 2
		r := raw(t, http.MethodPost, "/v1/subscriptions", m.TestKey, rawJSON(t, other), key)
		catWantErr(t, r, http.StatusConflict, "idempotency_error", "idempotency_key_reused", "")
	})

	harness.Rule(t, "8", "replaying cancel and update with the same Idempotency-Key changes once and answers the same", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		pr := subPrice(t, m, 900, nil)
		s := subCreate(t, m, subBody(pr.Id))
		ukey := map[string]string{"Idempotency-Key": "upd-" + m.ID}
		body := rawJSON(t, map[string]any{"metadata": map[string]string{"a": "1"}})
		u1 := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, ukey)
		u2 := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id, m.TestKey, body, ukey)
		if u1.Status != 200 || string(u1.Body) != string(u2.Body) || u2.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("update replay: %d %s / %s", u1.Status, u1.Body, u2.Body)
		}
		ckey := map[string]string{"Idempotency-Key": "cancel-" + m.ID}
		c1 := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/cancel", m.TestKey, `{"at_period_end": false}`, ckey)
		c2 := raw(t, http.MethodPost, "/v1/subscriptions/"+s.Id+"/cancel", m.TestKey, `{"at_period_end": false}`, ckey)
		if c1.Status != 200 || c2.Status != 200 || string(c1.Body) != string(c2.Body) || c2.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("cancel replay: %d %s / %d %s", c1.Status, c1.Body, c2.Status, c2.Body)
		}
		subWantEvents(t, m, s.Id, "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted")
	})
}

// subNextMonth is one calendar month after the Unix time at, clamped to the month's last day.
func subNextMonth(at int64) int64 {
	t := time.Unix(at, 0).UTC()
	first := time.Date(t.Year(), t.Month()+1, 1, t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	d := min(t.Day(), first.AddDate(0, 1, -1).Day())
	return time.Date(first.Year(), first.Month(), d, t.Hour(), t.Minute(), t.Second(), 0, time.UTC).Unix()
}
