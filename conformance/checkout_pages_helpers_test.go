package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Helpers of the hosted-page cases (issue 3 §1, D6, 5.2). Names start with pg. The pages are
// HTML, outside the OpenAPI documents, so they are fetched with a plain client that does not
// follow redirects (a case checks where a redirect points).

func init() { sectionTitles["5.2"] = "checkout client_secret" }

var pgHTTP = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// pgPage is a fetched page.
type pgPage struct {
	Status int
	Header http.Header
	Body   string
}

func pgDo(t *testing.T, method, u string, form url.Values) pgPage {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := pgHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return pgPage{resp.StatusCode, resp.Header, string(b)}
}

func pgGet(t *testing.T, u string) pgPage { t.Helper(); return pgDo(t, "GET", u, nil) }

// pgBase is the checkout origin of session s (scheme://host of its checkout_url).
func pgBase(t *testing.T, s api.CheckoutSession) string {
	t.Helper()
	u, err := url.Parse(s.CheckoutUrl)
	if err != nil {
		t.Fatal(err)
	}
	return u.Scheme + "://" + u.Host
}

// pgPost posts form to path (e.g. "/c/<id>/pay") of the session's checkout origin, with the
// client secret in the hidden field cs as the page does.
func pgPost(t *testing.T, s api.CheckoutSession, path string, form url.Values) pgPage {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("cs") == "" {
		form.Set("cs", s.ClientSecret)
	}
	return pgDo(t, "POST", pgBase(t, s)+path, form)
}

func pgCardForm(number string) url.Values {
	return url.Values{"method": {"card"}, "card_number": {number}, "card_exp": {"12 / 34"}, "card_cvc": {"123"}, "card_name": {"Ada Lovelace"}}
}

func pgSEPAForm(iban string) url.Values {
	return url.Values{"method": {"sepa_debit"}, "iban": {iban}, "account_holder": {"Ada Lovelace"}}
}

// pgSession creates a test-mode session of m with the given fields on top of csBody.
func pgSession(t *testing.T, m *Merchant, kv ...any) api.CheckoutSession {
	t.Helper()
	return csWantOK(t, csPost(t, m.TestKey, csWith(kv...)))
}

// pgWant fails unless the page has status and contains every part.
func pgWant(t *testing.T, p pgPage, status int, parts ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d; page:\n%.3000s", p.Status, status, p.Body)
	}
	for _, s := range parts {
		if !strings.Contains(p.Body, s) {
			t.Fatalf("page lacks %q:\n%.3000s", s, p.Body)
		}
	}
}

// pgWantComplete asserts the session is complete with a payment in status and exactly one
// checkout.session.completed (D6 as amended: a processing SEPA payment too), plus exactly one
// checkout.session.async_payment_pending for a processing one.
func pgWantComplete(t *testing.T, m *Merchant, id string, status wire.PaymentStatus) {
	t.Helper()
	got := csGet(t, m.Test, id)
	if got.Status != "complete" || got.Payment == nil || got.Payment.Status != status {
		t.Fatalf("session %s: status %s, payment %+v; want complete with a %s payment", id, got.Status, got.Payment, status)
	}
	types := []string{payEventCompleted}
	if status == "processing" {
		types = append(types, payEventPending)
	}
	for _, typ := range types {
		if evs := evtForSession(t, m.Test, typ, id); len(evs) != 1 {
			t.Fatalf("%d %s events, want exactly 1", len(evs), typ)
		}
	}
}

// pgShop is a merchant's site on an origin of its own: /thanks and /cart are the success and
// cancel pages; /frame embeds the embed_url given as ?src=; /kassajs pays with kassa.js.
type pgShop struct {
	*httptest.Server
}

func pgNewShop(t *testing.T) *pgShop {
	t.Helper()
	s := &pgShop{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Origin is the shop's origin as the browser sees it: "localhost", so that it is another
// site than the checkout origin (127.0.0.1), not only another port.
func (s *pgShop) Origin() string { return strings.Replace(s.URL, "127.0.0.1", "localhost", 1) }

func (s *pgShop) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q := r.URL.Query()
	switch r.URL.Path {
	case "/thanks":
		fmt.Fprint(w, `<!doctype html><title>Shop: thanks</title><h1 id="shop-thanks">Thank you for your order</h1>`)
	case "/cart":
		fmt.Fprint(w, `<!doctype html><title>Shop: cart</title><h1 id="shop-cart">Your cart</h1>`)
	case "/frame":
		fmt.Fprintf(w, `<!doctype html><title>Shop: embedded checkout</title><h1>Shop checkout</h1>`+
			`<iframe id="kassa" src="%s" width="520" height="820"></iframe>`, htmlAttr(q.Get("src")))
	case "/kassajs":
		fmt.Fprintf(w, `<!doctype html><title>Shop: kassa.js</title><h1>Pay on the shop's own page</h1>
<script src="%s/js/kassa.js"></script>
<p id="result">idle</p>
<button id="pay">Pay</button>
<script>
document.getElementById("pay").addEventListener("click", function () {
  var out = document.getElementById("result");
  out.textContent = "busy";
  Kassa.confirm({session: %q, clientSecret: %q, card: {number: %q, exp_month: 12, exp_year: %d, cvc: "123", name: "Ada"}})
    .then(function (r) { out.textContent = "ok:" + r.status; },
          function (e) { out.textContent = "error:" + e.status + ":" + e.code + ":" + (e.decline_code || ""); });
});
</script>`, htmlAttr(q.Get("kassa")), q.Get("session"), q.Get("secret"), q.Get("card"), time.Now().Year()+3)
	default:
		http.NotFound(w, r)
	}
}

func htmlAttr(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}

// pgWaitText polls until the element sel exists and its text contains want, or fails.
func pgWaitText(t *testing.T, ctx context.Context, sel, want string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		js := fmt.Sprintf(`(function(){var e=document.querySelector(%q);return e?e.textContent:"";})()`, sel)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err == nil && strings.Contains(got, want) {
			return got
		}
		last = got
		time.Sleep(100 * time.Millisecond)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	t.Fatalf("%s: text %q never contained %q (page %s)", sel, last, want, loc)
	return ""
}

// pgWaitLocation polls until the tab's URL starts with prefix, or fails.
func pgWaitLocation(t *testing.T, ctx context.Context, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var loc string
	for time.Now().Before(deadline) {
		loc, _ = chromedp.Run(ctx, chromedp.Location())
		if strings.HasPrefix(loc, prefix) {
			return loc
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("location %q, want %s…", loc, prefix)
	return ""
}
