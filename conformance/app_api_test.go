package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

var (
	appUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	// 192 bits of base62 need at least 33 characters.
	appLiveToken = regexp.MustCompile(`^at_live_[0-9A-Za-z]{33,}$`)
	appTestToken = regexp.MustCompile(`^at_test_[0-9A-Za-z]{33,}$`)
)

// appPaths are the App API's paths, with an id where one is needed.
var appPaths = []string{"/v1/merchant", "/v1/payments", "/v1/payments/py_000000000000000000000000", "/v1/products",
	"/v1/analytics/summary", "/v1/openapi.json", "/v1/refunds", "/v1/products/prod_000000000000000000000000", "/v1/invoices",
	"/v1/invoices/in_000000000000000000000000", "/v1/disputes", "/v1/subscriptions",
	"/v1/balance", "/v1/payouts"}

// appProducts creates n sandbox products for m, oldest first.
func appProducts(t *testing.T, m *Merchant, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ids[i] = catCreateProduct(t, m.Test, wire.ProductCreate{Name: "App product " + strconv.Itoa(i)}).Id
	}
	return ids
}

func TestAppInstallations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "D17", "registering an app returns its client id and a client secret shown once; payouts:read needs a reviewed app", func(t *testing.T) {
		t.Parallel()
		r, err := operator(t).CreateAppWithResponse(ctx, op.AppCreate{Name: "Payouts reader", RedirectUris: []string{"https://app.example/cb"}, Scopes: []op.AppScope{"payouts:read"}})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, 400, "invalid_request", "scope_requires_review", "scopes")
		r, err = operator(t).CreateAppWithResponse(ctx, op.AppCreate{Name: "Payouts reader", RedirectUris: []string{"https://app.example/cb"},
			Scopes: []op.AppScope{"payouts:read", "merchant:read"}, Reviewed: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON201 == nil || !strings.HasPrefix(r.JSON201.Id, "app_") || !strings.HasPrefix(r.JSON201.ClientSecret, "cs_app_") || len(r.JSON201.ClientSecret) < 7+33 {
			t.Fatalf("create: %d %s", r.StatusCode(), r.Body)
		}
		got, err := operator(t).RetrieveAppWithResponse(ctx, r.JSON201.Id)
		if err != nil || got.JSON200 == nil {
			t.Fatalf("retrieve: %v %s", err, got.Body)
		}
		if strings.Contains(string(got.Body), r.JSON201.ClientSecret) || strings.Contains(string(got.Body), "client_secret") {
			t.Fatalf("the secret is shown again: %s", got.Body)
		}
		// Installed with payouts:read because the app is reviewed.
		m := newMerchant(t, false)
		i, err := operator(t).CreateInstallationWithResponse(ctx, r.JSON201.Id, op.InstallationCreate{MerchantId: m.ID, Scopes: &[]op.AppScope{"payouts:read"}})
		if err != nil || i.JSON201 == nil {
			t.Fatalf("install: %v %s", err, i.Body)
		}
	})

	harness.Rule(t, "D17", "an installation has a UUID and one at_live_ and one at_test_ token of at least 192 bits, shown once", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		i := appInstall(t, m)
		if !appUUID.MatchString(i.Installation) || !appLiveToken.MatchString(i.LiveToken) || !appTestToken.MatchString(i.TestToken) {
			t.Fatalf("installation %+v", i)
		}
		if i.Merchant != m.ID || len(i.Scopes) != len(appAllScopes) || i.RevokedAt != nil {
			t.Fatalf("installation %+v", i)
		}
	})

	harness.Rule(t, "D17", "installing refuses a scope the app did not register, an unknown merchant, and a second active installation", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		a, err := operator(t).CreateAppWithResponse(ctx, op.AppCreate{Name: "Narrow", RedirectUris: []string{"http://127.0.0.1:9999/cb"}, Scopes: []op.AppScope{"payments:read"}})
		if err != nil || a.JSON201 == nil {
			t.Fatalf("create: %v %s", err, a.Body)
		}
		r, _ := operator(t).CreateInstallationWithResponse(ctx, a.JSON201.Id, op.InstallationCreate{MerchantId: m.ID, Scopes: &[]op.AppScope{"analytics:read"}})
		wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, 400, "invalid_request", "scope_not_registered", "scopes")
		r, _ = operator(t).CreateInstallationWithResponse(ctx, a.JSON201.Id, op.InstallationCreate{MerchantId: "mer_000000000000000000000000"})
		wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, 404, "not_found", "merchant_not_found", "merchant_id")
		r, _ = operator(t).CreateInstallationWithResponse(ctx, "app_000000000000000000000000", op.InstallationCreate{MerchantId: m.ID})
		wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, 404, "not_found", "app_not_found", "id")
		if r, _ = operator(t).CreateInstallationWithResponse(ctx, a.JSON201.Id, op.InstallationCreate{MerchantId: m.ID}); r.JSON201 == nil {
			t.Fatalf("install: %d %s", r.StatusCode(), r.Body)
		}
		r, _ = operator(t).CreateInstallationWithResponse(ctx, a.JSON201.Id, op.InstallationCreate{MerchantId: m.ID})
		wantError(t, r.StatusCode(), r.HTTPResponse.Header, r.Body, 409, "resource_conflict", "app_already_installed", "")
	})

	harness.Rule(t, "D17", "uninstalling revokes both tokens at once: the next request is 401 invalid_token", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		i := appInstall(t, m)
		for _, tok := range []string{i.LiveToken, i.TestToken} {
			if r := appRaw(t, http.MethodGet, "/v1/merchant", tok); r.Status != 200 {
				t.Fatalf("before: %d %s", r.Status, r.Body)
			}
		}
		d, err := operator(t).DeleteInstallationWithResponse(ctx, i.Installation)
		if err != nil || d.JSON200 == nil || d.JSON200.RevokedAt == nil {
			t.Fatalf("uninstall: %v %s", err, d.Body)
		}
		for _, tok := range []string{i.LiveToken, i.TestToken} {
			wantAppError(t, appRaw(t, http.MethodGet, "/v1/merchant", tok), 401, "invalid_token", "revoked")
		}
		d, _ = operator(t).DeleteInstallationWithResponse(ctx, i.Installation)
		wantError(t, d.StatusCode(), d.HTTPResponse.Header, d.Body, 404, "not_found", "installation_not_found", "id")
	})
}

func TestAppAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "D11", "401 invalid_token for a missing, malformed, unknown or revoked token, and for a merchant key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		for name, auth := range map[string]string{
			"missing":      "",
			"basic scheme": "Basic at_test_abc",
			"malformed":    "Bearer at_test_short",
			"unknown":      "Bearer at_live_" + strings.Repeat("A", 40),
			"merchant key": "Bearer " + m.TestKey,
		} {
			for _, p := range appPaths[:5] {
				r := appRaw(t, http.MethodGet, p, "", auth)
				if r.Status != 401 {
					t.Fatalf("%s %s: %d %s", name, p, r.Status, r.Body)
				}
				wantAppError(t, r, 401, "invalid_token", "")
			}
		}
	})

	harness.Rule(t, "4.5", "each endpoint answers with its scope and 403 insufficient_scope naming the scope without it", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		all := appInstall(t, m)
		only := appInstall(t, m, "refunds:read")
		for p, scope := range map[string]string{
			"/v1/merchant": "merchant:read", "/v1/payments": "payments:read", "/v1/payments/py_000000000000000000000000": "payments:read",
			"/v1/products": "products:read", "/v1/analytics/summary": "analytics:read",
		} {
			wantAppError(t, appRaw(t, http.MethodGet, p, only.TestToken), 403, "insufficient_scope", scope)
			wantAppError(t, appRaw(t, http.MethodGet, p, only.LiveToken), 403, "insufficient_scope", scope)
			r := appRaw(t, http.MethodGet, p, all.TestToken)
			if want := 200; strings.Contains(p, "py_") {
				wantAppError(t, r, 404, "not_found", "py_000000000000000000000000")
			} else if r.Status != want {
				t.Fatalf("%s with %s: %d %s", p, scope, r.Status, r.Body)
			}
		}
	})

	harness.Rule(t, "4.5", "every method other than GET is 405 method_not_allowed on every App API path", func(t *testing.T) {
		t.Parallel()
		i := appInstall(t, newMerchant(t, false))
		for _, p := range appPaths {
			for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
				r := appRaw(t, method, p, i.TestToken)
				if r.Header.Get("Allow") != "GET" {
					t.Fatalf("%s %s: Allow %q", method, p, r.Header.Get("Allow"))
				}
				wantAppError(t, r, 405, "method_not_allowed", method)
			}
			// HEAD has no body to validate.
			req, _ := http.NewRequest(http.MethodHead, appBase()+p, nil)
			req.Header.Set("Authorization", "Bearer "+i.TestToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" {
				t.Fatalf("HEAD %s: %d", p, resp.StatusCode)
			}
		}
	})

	harness.Rule(t, "D11", "an unknown App API path is 404 not_found in the App envelope", func(t *testing.T) {
		t.Parallel()
		i := appInstall(t, newMerchant(t, false))
		for _, p := range []string{"/v1/payouts_typo", "/v2/payments", "/v1/payments/py_x/refunds", ""} {
			wantAppError(t, appRaw(t, http.MethodGet, p, i.TestToken), 404, "not_found", "")
		}
	})

	harness.Rule(t, "4.5", "the App API's document is served at the app base URL's /v1/openapi.json, naming that URL", func(t *testing.T) {
		t.Parallel()
		r := appRaw(t, http.MethodGet, "/v1/openapi.json", "")
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		var doc struct {
			Servers []struct{ URL string } `json:"servers"`
			Paths   map[string]any         `json:"paths"`
		}
		if err := json.Unmarshal(r.Body, &doc); err != nil || len(doc.Servers) != 1 || doc.Servers[0].URL != appBase() || doc.Paths["/v1/payments"] == nil {
			t.Fatalf("document: %v servers %+v", err, doc.Servers)
		}
	})

	harness.Rule(t, "8", "App API paging: limit 0 and 101 and a negative offset are 400, limit 1 and 100 answer, default 25, offset past the end is empty, has_more false exactly at the end", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		i := appInstall(t, m)
		ids := appProducts(t, m, 26) // newest last
		c := appClient(t, i.TestToken)
		list := func(limit *int, offset *int64) *appapi.ListProductsResponse {
			t.Helper()
			r, err := c.ListProductsWithResponse(ctx, &appapi.ListProductsParams{Limit: limit, Offset: offset})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		for _, bad := range []string{"limit=0", "limit=101", "offset=-1", "limit=abc", "limit=1.5"} {
			wantAppError(t, appRaw(t, http.MethodGet, "/v1/products?"+bad, i.TestToken), 400, "invalid_request", strings.Split(bad, "=")[0])
		}
		r := list(nil, nil)
		if r.JSON200 == nil || len(r.JSON200.Data) != 25 || !r.JSON200.HasMore || r.JSON200.Data[0].Id != ids[25] {
			t.Fatalf("default page: %s", r.Body)
		}
		r = list(ptr(1), nil)
		if len(r.JSON200.Data) != 1 || !r.JSON200.HasMore || r.JSON200.Data[0].Id != ids[25] {
			t.Fatalf("limit 1: %s", r.Body)
		}
		r = list(ptr(100), nil)
		if len(r.JSON200.Data) != 26 || r.JSON200.HasMore || r.JSON200.Data[25].Id != ids[0] {
			t.Fatalf("limit 100: %d has_more %v", len(r.JSON200.Data), r.JSON200.HasMore)
		}
		r = list(ptr(1), ptr(int64(25))) // the last row exactly
		if len(r.JSON200.Data) != 1 || r.JSON200.HasMore || r.JSON200.Data[0].Id != ids[0] {
			t.Fatalf("at the end: %s", r.Body)
		}
		r = list(ptr(13), ptr(int64(13))) // a page that ends exactly at the end
		if len(r.JSON200.Data) != 13 || r.JSON200.HasMore {
			t.Fatalf("ends at the end: %d %v", len(r.JSON200.Data), r.JSON200.HasMore)
		}
		r = list(nil, ptr(int64(26)))
		if len(r.JSON200.Data) != 0 || r.JSON200.HasMore {
			t.Fatalf("past the end: %s", r.Body)
		}
		if !strings.Contains(string(list(nil, ptr(int64(1000000))).Body), `"data":[]`) {
			t.Fatal("far past the end is not an empty list")
		}
	})

	harness.Rule(t, "4.5", "unknown query parameters are ignored", func(t *testing.T) {
		t.Parallel()
		i := appInstall(t, newMerchant(t, false))
		for _, p := range []string{"/v1/products?expand=prices&limit=2", "/v1/payments?created[gte]=1&foo=bar", "/v1/analytics/summary?currency=eur", "/v1/merchant?x=1"} {
			if r := appRaw(t, http.MethodGet, p, i.TestToken); r.Status != 200 {
				t.Fatalf("%s: %d %s", p, r.Status, r.Body)
			}
		}
	})

	harness.Rule(t, "D11", "payments: newest first with ISO 8601 UTC times and lower-case money, status exact match, one by id; another merchant's id is 404", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		first := dashPay(t, m, 2500, "eur", payCardOK)
		second := dashPay(t, m, 1200, "EUR", payCardOK)
		i := appInstall(t, m)
		c := appClient(t, i.TestToken)
		r, err := c.ListPaymentsWithResponse(ctx, &appapi.ListPaymentsParams{})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("%v %s", err, r.Body)
		}
		d := r.JSON200.Data
		if len(d) != 2 || d[0].Id != second.Payment.Id || d[1].Id != first.Payment.Id || r.JSON200.HasMore {
			t.Fatalf("list: %s", r.Body)
		}
		p := d[1]
		if p.Object != "payment" || p.Amount != (appapi.Money{Amount: 2500, Currency: "eur"}) || p.AmountRefunded.Amount != 0 ||
			p.Fee != (appapi.Money{Amount: first.Payment.Fee.ServiceFeeChargeCurrency, Currency: "eur"}) ||
			p.Session == nil || *p.Session != first.Id || p.Created.Location() != time.UTC || p.Created.Unix() != first.Payment.Created {
			t.Fatalf("payment: %+v", p)
		}
		if !strings.Contains(string(r.Body), `"created":"`) || !strings.Contains(string(r.Body), `Z"`) {
			t.Fatalf("created is not an ISO 8601 UTC string: %s", r.Body)
		}
		for status, n := range map[appapi.PaymentStatus]int{"succeeded": 2, "failed": 0, "refunded": 0} {
			r, _ := c.ListPaymentsWithResponse(ctx, &appapi.ListPaymentsParams{Status: &status})
			if r.JSON200 == nil || len(r.JSON200.Data) != n {
				t.Fatalf("status %s: %s", status, r.Body)
			}
		}
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/payments?status=paid", i.TestToken), 400, "invalid_request", "status")
		one, _ := c.GetPaymentWithResponse(ctx, first.Payment.Id)
		if one.JSON200 == nil || one.JSON200.Id != first.Payment.Id {
			t.Fatalf("one: %s", one.Body)
		}
		other := appInstall(t, newMerchant(t, false))
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/payments/"+first.Payment.Id, other.TestToken), 404, "not_found", first.Payment.Id)
	})

	harness.Rule(t, "D11", "the token decides the environment: a test token reads sandbox data only, a live token live data only", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		paid := dashPay(t, m, 3000, "eur", payCardOK)
		testProduct := catCreateProduct(t, m.Test, wire.ProductCreate{Name: "Sandbox thing"})
		liveProduct := catCreateProduct(t, m.Live, wire.ProductCreate{Name: "Live thing"})
		i := appInstall(t, m)
		live, test := appClient(t, i.LiveToken), appClient(t, i.TestToken)
		lp, _ := live.ListProductsWithResponse(ctx, nil)
		tp, _ := test.ListProductsWithResponse(ctx, nil)
		if len(lp.JSON200.Data) != 1 || lp.JSON200.Data[0].Id != liveProduct.Id || len(tp.JSON200.Data) != 1 || tp.JSON200.Data[0].Id != testProduct.Id {
			t.Fatalf("live %s test %s", lp.Body, tp.Body)
		}
		pay, _ := live.ListPaymentsWithResponse(ctx, nil)
		if len(pay.JSON200.Data) != 0 {
			t.Fatalf("the live token sees sandbox payments: %s", pay.Body)
		}
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/payments/"+paid.Payment.Id, i.LiveToken), 404, "not_found", "")
		ls, _ := live.GetAnalyticsSummaryWithResponse(ctx, nil)
		if ls.JSON200 == nil || len(ls.JSON200.Currencies) != 0 {
			t.Fatalf("live summary: %s", ls.Body)
		}
		// The same shape and id forms in both environments.
		lm, _ := live.GetMerchantWithResponse(ctx)
		tm, _ := test.GetMerchantWithResponse(ctx)
		if lm.JSON200 == nil || tm.JSON200 == nil || *lm.JSON200 != *tm.JSON200 || lm.JSON200.Id != m.ID || lm.JSON200.Status != "active" {
			t.Fatalf("merchant: %s / %s", lm.Body, tm.Body)
		}
	})

	harness.Rule(t, "D11", "analytics summary: days 1 to 365 (default 30), per currency gross, refunded, fees, net and count", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		a := dashPay(t, m, 2500, "eur", payCardOK)
		b := dashPay(t, m, 1200, "eur", payCardOK)
		c := dashPay(t, m, 5000, "usd", payCardOK)
		i := appInstall(t, m)
		for _, bad := range []string{"0", "366", "-1", "x"} {
			wantAppError(t, appRaw(t, http.MethodGet, "/v1/analytics/summary?days="+bad, i.TestToken), 400, "invalid_request", "days")
		}
		for _, days := range []*int{nil, ptr(1), ptr(365)} {
			r, err := appClient(t, i.TestToken).GetAnalyticsSummaryWithResponse(ctx, &appapi.GetAnalyticsSummaryParams{Days: days})
			if err != nil || r.JSON200 == nil {
				t.Fatalf("%v %s", err, r.Body)
			}
			s := r.JSON200
			want := 30
			if days != nil {
				want = *days
			}
			if s.Days != want || s.End.Sub(s.Start) != time.Duration(want)*24*time.Hour || s.End.Before(time.Now().Add(-time.Minute)) || len(s.Currencies) != 2 {
				t.Fatalf("summary: %s", r.Body)
			}
			eur, usd := s.Currencies[0], s.Currencies[1]
			fees := a.Payment.Fee.ServiceFeeChargeCurrency + b.Payment.Fee.ServiceFeeChargeCurrency
			if eur.Currency != "eur" || eur.GrossVolume.Amount != 3700 || eur.Fees.Amount != fees || eur.Refunded.Amount != 0 ||
				eur.NetVolume.Amount != 3700-fees || eur.PaymentCount != 2 || eur.NetVolume.Currency != "eur" {
				t.Fatalf("eur: %+v", eur)
			}
			if usd.Currency != "usd" || usd.GrossVolume.Amount != 5000 || usd.PaymentCount != 1 || usd.Fees.Amount != c.Payment.Fee.ServiceFeeChargeCurrency {
				t.Fatalf("usd: %+v", usd)
			}
		}
	})

	harness.Rule(t, "D11", "analytics summary: the last N×24 hours to the second; a refund counts with the payment it refunds, whenever it is made", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		old := dashPay(t, o.Merchant, 4000, "eur", payCardOK)
		clockAdvance(t, o.Test, 3*24*3600) // the old payment is now three days old
		fresh := dashPay(t, o.Merchant, 1000, "eur", payCardOK)
		clockAdvance(t, o.Test, 5*24*3600) // eight days, and five
		refundOK(t, o, old.Payment.Id, ptr(int64(1500)))
		i := appInstall(t, o.Merchant)
		c := appClient(t, i.TestToken)
		summary := func(days int) *appapi.AnalyticsSummary {
			t.Helper()
			r, err := c.GetAnalyticsSummaryWithResponse(ctx, &appapi.GetAnalyticsSummaryParams{Days: &days})
			if err != nil || r.JSON200 == nil {
				t.Fatalf("days=%d: %v %s", days, err, r.Body)
			}
			return r.JSON200
		}
		// Each payment is N×24 hours old plus the few seconds the test took: a window of N days
		// leaves it out, one of N+1 days holds it. The refund, made today, counts in the window
		// that holds the payment it refunds, and in no other.
		for _, c := range []struct {
			days               int
			gross, refunded, n int64
		}{{5, 0, 0, 0}, {6, 1000, 0, 1}, {8, 1000, 0, 1}, {9, 5000, 1500, 2}, {365, 5000, 1500, 2}} {
			s := summary(c.days)
			if c.n == 0 {
				if len(s.Currencies) != 0 {
					t.Fatalf("days=%d: %+v", c.days, s.Currencies)
				}
				continue
			}
			if len(s.Currencies) != 1 {
				t.Fatalf("days=%d: %+v", c.days, s.Currencies)
			}
			eur := s.Currencies[0]
			fees := fresh.Payment.Fee.ServiceFeeChargeCurrency
			if c.n == 2 {
				fees += old.Payment.Fee.ServiceFeeChargeCurrency
			}
			if eur.GrossVolume.Amount != c.gross || eur.Refunded.Amount != c.refunded || eur.PaymentCount != c.n ||
				eur.Fees.Amount != fees || eur.NetVolume.Amount != c.gross-c.refunded-fees {
				t.Fatalf("days=%d: %+v, want gross %d, refunded %d, %d payments", c.days, eur, c.gross, c.refunded, c.n)
			}
		}
	})

	harness.Rule(t, "D17", "rate limits apply per installation and environment: 429 rate_limit_error with Retry-After", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, false)
		busy, calm := appInstall(t, m), appInstall(t, m)
		// The suite's server runs with high limits; when the harness started it, the requests go
		// to a sibling on the same database whose limits are low enough to meet one by one.
		base := appBase()
		if target.CanLaunchSiblings() {
			s, err := target.Sibling(context.Background(), "app-ratelimit", harness.Options{Env: map[string]string{
				"KASSA_RATE_TEST": "3", "KASSA_RATE_LIVE": "3"}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			base = s.BaseURL + "/app"
		}
		var limited Raw
		for n := 0; n < 2000 && limited.Status == 0; n++ {
			if r := appRawAt(t, base, http.MethodGet, "/v1/merchant", busy.TestToken); r.Status == 429 {
				limited = r
			} else if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		}
		if limited.Status != 429 {
			t.Fatal("never limited")
		}
		wantAppError(t, limited, 429, "rate_limit_error", "Retry after")
		if s, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("Retry-After %q", limited.Header.Get("Retry-After"))
		}
		// Another installation, and the busy one's other environment, have their own budget.
		if r := appRawAt(t, base, http.MethodGet, "/v1/merchant", calm.TestToken); r.Status != 200 {
			t.Fatalf("another installation: %d %s", r.Status, r.Body)
		}
		if r := appRawAt(t, base, http.MethodGet, "/v1/merchant", busy.LiveToken); r.Status != 200 {
			t.Fatalf("the live environment: %d %s", r.Status, r.Body)
		}
	})
}

func TestAppAPIAbuseThrottle(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "ABUSE", "App API: failed tokens count against the address with the merchant API's; then 429 rate_limit_error in the App envelope before any token is checked", func(t *testing.T) {
		t.Parallel()
		i := appInstall(t, newMerchant(t, false))
		srv := throttleServer(t, "app-auth-throttle", nil)
		base := srv.BaseURL + "/app"
		r, failed := untilLimited(t, 40, 401, func(int) Raw {
			return appRawAt(t, base, http.MethodGet, "/v1/merchant", "at_test_"+strings.Repeat("Z", 40))
		})
		if failed < 20 {
			t.Fatalf("limited after %d failures, want 20", failed)
		}
		wantAppError(t, r, 429, "rate_limit_error", "failed authentications")
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 3 {
			t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		// A valid token from the address is refused too, and so is the merchant API.
		wantAppError(t, appRawAt(t, base, http.MethodGet, "/v1/merchant", i.TestToken), 429, "rate_limit_error", "")
		m := rawAt(t, srv.BaseURL, http.MethodGet, "/v1/products", "sk_test_x", "", nil)
		wantError(t, m.Status, m.Header, m.Body, 429, "rate_limit_error", "rate_limited", "")
	})
}
