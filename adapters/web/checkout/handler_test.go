package checkoutweb

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/ports"
)

// fakeBuyer stands in for the checkout module: one session, the sandbox's card outcomes, and
// the rule that a session pays once (a confirm after success meets session_expired).
type fakeBuyer struct {
	mu       sync.Mutex
	snap     checkout.SessionSnapshot
	pending  bool
	confirms int
	seen     []checkout.ConfirmInput
}

const (
	fakeID     = "cs_AAAAAAAAAAAAAAAAAAAAAAAA"
	fakeSecret = "cs_AAAAAAAAAAAAAAAAAAAAAAAA_secret_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

func newFake(successURL, cancelURL string) *fakeBuyer {
	desc, ref := "Two <b>mugs</b>", "order-7"
	amt, img := int64(1250), "https://img.example/mug.png"
	s := checkout.SessionSnapshot{
		ID: fakeID, Scope: core.Scope{MerchantID: "mer_1", Env: core.EnvTest}, Mode: checkout.ModePayment,
		Status: checkout.StatusOpen, Amount: 2500, Currency: "EUR", ClientSecret: fakeSecret,
		Description: &desc, Reference: &ref,
		LineItems: []checkout.LineItem{{Name: "Mug", Quantity: 2, Amount: &amt, ImageURL: &img}},
	}
	if successURL != "" {
		s.SuccessURL = &successURL
	}
	if cancelURL != "" {
		s.CancelURL = &cancelURL
	}
	return &fakeBuyer{snap: s}
}

func (f *fakeBuyer) open(id, cs string) error {
	if id != fakeID || cs != fakeSecret || f.snap.Status != checkout.StatusOpen {
		return checkout.ErrSessionExpired
	}
	return nil
}

func (f *fakeBuyer) BuyerView(_ context.Context, id, cs string) (*checkout.BuyerView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.open(id, cs); err != nil {
		return nil, err
	}
	v := &checkout.BuyerView{Session: checkout.RehydrateSession(f.snap), MerchantName: "Mugs & Co"}
	if f.pending {
		v.Pending = &checkout.PendingAction{Kind: ports.ActionThreeDSecure}
	}
	return v, nil
}

func (f *fakeBuyer) Confirm(_ context.Context, id, cs string, in checkout.ConfirmInput) (*checkout.ConfirmResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.open(id, cs); err != nil {
		return nil, err
	}
	f.confirms++
	f.seen = append(f.seen, in)
	if in.Method == ports.MethodSEPADebit {
		return f.complete(checkout.ConfirmProcessing), nil
	}
	switch in.Card.Number {
	case "4000000000000002":
		return nil, &checkout.DeclineError{DeclineCode: ports.DeclineGenericDecline, Message: "declined"}
	case "4000000000000127":
		return nil, &checkout.DeclineError{DeclineCode: ports.DeclineIncorrectCVC, Message: "cvc", Param: "card.cvc"}
	case "4000002760003184":
		f.pending = true
		return &checkout.ConfirmResult{Status: checkout.ConfirmRequiresAction, Session: checkout.RehydrateSession(f.snap),
			Action: &checkout.PendingAction{Kind: ports.ActionThreeDSecure}}, nil
	}
	return f.complete(checkout.ConfirmSucceeded), nil
}

func (f *fakeBuyer) complete(st checkout.ConfirmStatus) *checkout.ConfirmResult {
	f.snap.Status = checkout.StatusComplete
	f.pending = false
	return &checkout.ConfirmResult{Status: st, Session: checkout.RehydrateSession(f.snap)}
}

func (f *fakeBuyer) ResolveAction(_ context.Context, id, cs string, approve bool) (*checkout.ConfirmResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.open(id, cs); err != nil {
		return nil, err
	}
	if !f.pending {
		return nil, checkout.ErrNoPendingAction
	}
	if !approve {
		f.pending = false
		return nil, &checkout.DeclineError{DeclineCode: ports.DeclineAuthenticationFailed, Message: "failed"}
	}
	return f.complete(checkout.ConfirmSucceeded), nil
}

func (f *fakeBuyer) CancelByBuyer(_ context.Context, id, cs string) (*checkout.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.open(id, cs); err != nil {
		return nil, err
	}
	f.snap.Status = checkout.StatusCanceled
	return checkout.RehydrateSession(f.snap), nil
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, h http.Handler, method, target string, form url.Values) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header(), rec.Body.String()}
}

func newHandler(f *fakeBuyer) *Handler {
	return New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Buyer: f,
		Now: func() time.Time { return time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC) }})
}

func payCard(number string) url.Values {
	return url.Values{"cs": {fakeSecret}, "method": {"card"}, "card_number": {number}, "card_exp": {"12 / 30"}, "card_cvc": {"123"}, "card_name": {"Ada"}}
}

func wantIn(t *testing.T, a answer, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(a.body, p) {
			t.Fatalf("page (status %d) lacks %q:\n%s", a.status, p, a.body)
		}
	}
}

func TestCheckoutPageShowsTheSession(t *testing.T) {
	h := newHandler(newFake("", ""))
	a := do(t, h, "GET", "/c/"+fakeID+"?cs="+fakeSecret, nil)
	if a.status != 200 {
		t.Fatalf("status %d", a.status)
	}
	wantIn(t, a, "Mugs &amp; Co", "Two &lt;b&gt;mugs&lt;/b&gt;", "25.00 €", "12.50 €", "× 2", `src="https://img.example/mug.png"`,
		"Test mode", `autocomplete="cc-name"`, `autocomplete="cc-number"`, `autocomplete="cc-exp"`, `autocomplete="cc-csc"`,
		`inputmode="numeric"`, `name="iban"`, `action="/c/`+fakeID+`/pay"`, `action="/c/`+fakeID+`/cancel"`)
	if strings.Contains(a.body, "<script>") || strings.Contains(a.body, "style=") {
		t.Fatal("inline script or style on the page")
	}
	if a.header.Get("Cache-Control") != "no-store" || a.header.Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(a.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("headers %v", a.header)
	}
	e := do(t, h, "GET", "/embed/"+fakeID+"?cs="+fakeSecret, nil)
	if e.status != 200 || e.header.Get("X-Frame-Options") != "" || !strings.Contains(e.header.Get("Content-Security-Policy"), "frame-ancestors *") {
		t.Fatalf("embed: %d %v", e.status, e.header)
	}
	wantIn(t, e, `action="/embed/`+fakeID+`/pay"`)
}

func TestWrongSecretIsTheExpiredPage(t *testing.T) {
	h := newHandler(newFake("", ""))
	for _, target := range []string{"/c/" + fakeID + "?cs=nope", "/c/" + fakeID, "/embed/cs_other?cs=" + fakeSecret, "/c/" + fakeID + "/3ds?cs=x"} {
		a := do(t, h, "GET", target, nil)
		if a.status != 422 {
			t.Fatalf("%s: status %d", target, a.status)
		}
		wantIn(t, a, "no longer valid")
	}
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", url.Values{"cs": {"wrong"}, "method": {"card"}})
	if a.status != 422 {
		t.Fatalf("pay with a wrong secret: %d", a.status)
	}
}

func TestPayValidatesBeforeConfirming(t *testing.T) {
	f := newFake("", "")
	h := newHandler(f)
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", url.Values{"cs": {fakeSecret}, "method": {"card"},
		"card_number": {"4242424242424241"}, "card_exp": {"01/20"}, "card_cvc": {"1"}, "card_name": {"Ada"}})
	if a.status != 400 || f.confirms != 0 {
		t.Fatalf("status %d, confirms %d", a.status, f.confirms)
	}
	wantIn(t, a, msgNumber, msgExpired, msgCVC, `value="Ada"`, `value="01/20"`)
	if strings.Contains(a.body, "4242424242424241") {
		t.Fatal("the card number was written back into the page")
	}
	s := do(t, h, "POST", "/c/"+fakeID+"/pay", url.Values{"cs": {fakeSecret}, "method": {"sepa_debit"}, "iban": {"DE00"}, "account_holder": {"Ada"}})
	if s.status != 400 || f.confirms != 0 {
		t.Fatalf("sepa: %d", s.status)
	}
	wantIn(t, s, msgIBAN, "<details id=\"sepa\" open>")
}

func TestDeclineThenSuccessShowsReceipt(t *testing.T) {
	f := newFake("", "")
	h := newHandler(f)
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4000 0000 0000 0002"))
	if a.status != 402 {
		t.Fatalf("decline status %d", a.status)
	}
	wantIn(t, a, "Your card was declined", `data-decline-code="generic_decline"`)
	c := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4000000000000127"))
	wantIn(t, c, `id="err-card_cvc">Your card&#39;s security code is incorrect.`)
	ok := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4242424242424242"))
	if ok.status != 200 {
		t.Fatalf("success status %d", ok.status)
	}
	wantIn(t, ok, "payment was received", "25.00 €", "order-7")
	if f.seen[2].Card.Number != "4242424242424242" || f.seen[2].Card.ExpYear != 2030 || f.seen[2].Card.ExpMonth != 12 {
		t.Fatalf("confirm input %v", f.seen[2].Card)
	}
	again := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4242424242424242"))
	if again.status != 422 || f.confirms != 3 {
		t.Fatalf("replayed post: %d, confirms %d", again.status, f.confirms)
	}
}

func TestSuccessRedirects(t *testing.T) {
	f := newFake("https://shop.example/thanks", "https://shop.example/cart")
	h := newHandler(f)
	page := do(t, h, "GET", "/c/"+fakeID+"?cs="+fakeSecret, nil)
	if !strings.Contains(page.header.Get("Content-Security-Policy"), "form-action 'self' https://shop.example;") {
		t.Fatalf("CSP %q", page.header.Get("Content-Security-Policy"))
	}
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4242424242424242"))
	if a.status != 303 || a.header.Get("Location") != "https://shop.example/thanks" {
		t.Fatalf("%d %v", a.status, a.header)
	}
}

func TestEmbedLeavesTheFrame(t *testing.T) {
	f := newFake("https://shop.example/thanks", "")
	h := newHandler(f)
	a := do(t, h, "POST", "/embed/"+fakeID+"/pay", payCard("4242424242424242"))
	if a.status != 200 {
		t.Fatalf("%d", a.status)
	}
	wantIn(t, a, `href="https://shop.example/thanks" target="_top"`)
	if a.header.Get("X-Frame-Options") != "" {
		t.Fatal("embed outcome page not frameable")
	}
}

func TestThreeDSecure(t *testing.T) {
	f := newFake("", "")
	h := newHandler(f)
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4000002760003184"))
	want := "/c/" + fakeID + "/3ds?cs=" + fakeSecret
	if a.status != 303 || a.header.Get("Location") != want {
		t.Fatalf("%d %v", a.status, a.header)
	}
	if g := do(t, h, "GET", "/c/"+fakeID+"?cs="+fakeSecret, nil); g.status != 303 || g.header.Get("Location") != want {
		t.Fatalf("checkout page with a pending challenge: %d %v", g.status, g.header)
	}
	c := do(t, h, "GET", want, nil)
	wantIn(t, c, "Complete", "Fail", `value="complete"`, `value="fail"`)
	failed := do(t, h, "POST", "/c/"+fakeID+"/3ds", url.Values{"cs": {fakeSecret}, "action": {"fail"}})
	if failed.status != 402 {
		t.Fatalf("fail: %d", failed.status)
	}
	wantIn(t, failed, "authentication_failed", "could not authenticate")
	if g := do(t, h, "GET", want, nil); g.status != 303 {
		t.Fatalf("challenge after fail: %d", g.status)
	}
	do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4000002760003184"))
	done := do(t, h, "POST", "/c/"+fakeID+"/3ds", url.Values{"cs": {fakeSecret}, "action": {"complete"}})
	if done.status != 200 {
		t.Fatalf("complete: %d", done.status)
	}
	wantIn(t, done, "payment was received")
}

func TestSEPAProcessingAndCancel(t *testing.T) {
	f := newFake("", "")
	h := newHandler(f)
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", url.Values{"cs": {fakeSecret}, "method": {"sepa_debit"},
		"iban": {"DE89 3704 0044 0532 0130 00"}, "account_holder": {"Ada Lovelace"}})
	if a.status != 200 {
		t.Fatalf("%d", a.status)
	}
	wantIn(t, a, "processing")
	if f.seen[0].SEPA.IBAN != "DE89370400440532013000" {
		t.Fatalf("iban %v", f.seen[0].SEPA)
	}

	g := newFake("", "https://shop.example/cart")
	hc := newHandler(g)
	c := do(t, hc, "POST", "/c/"+fakeID+"/cancel", url.Values{"cs": {fakeSecret}})
	if c.status != 303 || c.header.Get("Location") != "https://shop.example/cart" {
		t.Fatalf("cancel: %d %v", c.status, c.header)
	}
	if again := do(t, hc, "GET", "/c/"+fakeID+"?cs="+fakeSecret, nil); again.status != 422 {
		t.Fatalf("after cancel: %d", again.status)
	}
	n := newFake("", "")
	if c := do(t, newHandler(n), "POST", "/c/"+fakeID+"/cancel", url.Values{"cs": {fakeSecret}}); c.status != 200 || !strings.Contains(c.body, "canceled") {
		t.Fatalf("cancel without url: %d", c.status)
	}
}

func TestAssetsAndUnknownPaths(t *testing.T) {
	h := newHandler(newFake("", ""))
	for path, ct := range map[string]string{"/assets/checkout.js": "javascript", "/assets/checkout.css": "text/css", "/assets/kassa.css": "text/css", "/js/kassa.js": "javascript"} {
		a := do(t, h, "GET", path, nil)
		if a.status != 200 || !strings.Contains(a.header.Get("Content-Type"), ct) || a.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: %d %v", path, a.status, a.header)
		}
	}
	if a := do(t, h, "GET", "/js/kassa.js", nil); a.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatal("kassa.js without CORS")
	}
	for _, p := range []string{"/", "/assets/kassa.js", "/c/"} {
		if a := do(t, h, "GET", p, nil); a.status != 404 {
			t.Fatalf("%s: %d", p, a.status)
		}
	}
}

func TestSEPAOnlyForEUR(t *testing.T) {
	f := newFake("", "")
	f.snap.Currency, f.snap.Amount = "USD", 123456
	a := do(t, newHandler(f), "GET", "/c/"+fakeID+"?cs="+fakeSecret, nil)
	wantIn(t, a, "$1,234.56")
	if strings.Contains(a.body, `name="iban"`) {
		t.Fatal("SEPA offered on a USD session")
	}
}

func TestRefusalsAndReplays(t *testing.T) {
	f := newFake("", "")
	h := newHandler(f)
	// The challenge answered twice (two tabs): the second goes back to the session's page.
	do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4000002760003184"))
	if a := do(t, h, "POST", "/c/"+fakeID+"/3ds", url.Values{"cs": {fakeSecret}, "action": {"fail"}}); a.status != 402 {
		t.Fatalf("fail: %d", a.status)
	}
	a := do(t, h, "POST", "/c/"+fakeID+"/3ds", url.Values{"cs": {fakeSecret}, "action": {"fail"}})
	if a.status != 303 || a.header.Get("Location") != "/c/"+fakeID+"?cs="+fakeSecret || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("replayed challenge answer: %d %v", a.status, a.header)
	}
	if a := do(t, h, "POST", "/c/"+fakeID+"/3ds", url.Values{"cs": {fakeSecret}, "action": {"maybe"}}); a.status != 400 {
		t.Fatalf("unknown answer: %d", a.status)
	}
}

// refusingBuyer refuses every confirmation with a use-case error that is not about an input.
type refusingBuyer struct{ *fakeBuyer }

func (refusingBuyer) Confirm(context.Context, string, string, checkout.ConfirmInput) (*checkout.ConfirmResult, error) {
	return nil, core.NewError(core.TypeInvalidState, "session_confirm_limit", "", "Too many attempts.")
}

func TestUseCaseRefusalShownAboveTheForm(t *testing.T) {
	h := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Buyer: refusingBuyer{newFake("", "")}})
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4242424242424242"))
	if a.status != 422 {
		t.Fatalf("status %d", a.status)
	}
	wantIn(t, a, `id="form-error" role="alert" tabindex="-1">Too many attempts.`, `id="card-form"`)
}

// unprocessableBuyer is a live session with no live processor configured: every
// confirmation meets processor_unavailable.
type unprocessableBuyer struct{ *fakeBuyer }

func (unprocessableBuyer) Confirm(context.Context, string, string, checkout.ConfirmInput) (*checkout.ConfirmResult, error) {
	return nil, checkout.ErrProcessorUnavailable
}

func TestLiveSessionWithoutProcessorIs503(t *testing.T) {
	f := newFake("", "")
	f.snap.Scope.Env = core.EnvLive
	h := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Buyer: unprocessableBuyer{f}})
	a := do(t, h, "POST", "/c/"+fakeID+"/pay", payCard("4242424242424242"))
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", a.status)
	}
	wantIn(t, a, `id="form-error" role="alert" tabindex="-1">`+checkout.ErrProcessorUnavailable.Message, `id="card-form"`)
}

// The checkout's stylesheet takes every colour from the design tokens (kassa.css): no literal.
func TestStylesheetUsesTokens(t *testing.T) {
	css, err := staticFS.ReadFile("static/checkout.css")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(`).Find(css); m != nil {
		t.Fatalf("checkout.css has the colour literal %q; add a token to adapters/web/theme/kassa.css", m)
	}
}
