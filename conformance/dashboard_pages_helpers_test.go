package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// Helpers of the dashboard page cases (browser tests of adapters/web/dashboard against the real
// server). Names start with pg so they do not collide with the helpers of other sections.

func init() {
	harness.Section("PAGES", "dashboard pages (browser)")
}

// dpNewOwner is newDashMerchant (onboarded, not signed in) for a page case: it skips when the
// target's dashboard origin is unknown (an external target without KASSA_DASHBOARD_URL).
func dpNewOwner(t *testing.T) *DashOwner {
	t.Helper()
	if target.DashboardURL == "" {
		t.Skip("no dashboard URL (set KASSA_DASHBOARD_URL for an external target)")
	}
	return newDashMerchant(t, true)
}

// dpURL is a page URL on the dashboard origin.
func dpURL(path string) string { return target.DashboardURL + path }

// dpDo runs browser steps and fails the test on error, naming the step.
func dpDo(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// dpWait polls the JavaScript expression cond (a boolean) until it holds, across navigations,
// and fails after 20 s with what and the page's location and main text.
func dpWait(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lastErr error
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf("(() => { try { return !!(%s); } catch (e) { return false; } })()", cond)))
		if err == nil && ok {
			return
		}
		lastErr = err
		if time.Now().After(deadline) || ctx.Err() != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 1500) : ""`))
			t.Fatalf("waiting for %s: not so after 20 s (last error %v); at %s; page:\n%s", what, lastErr, loc, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dpText returns the text of the first element sel matches ("" when none).
func dpText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%s) || {}).textContent || ""`, dpJS(sel))))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// dpValue returns the value of the first input sel matches.
func dpValue(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%s) || {}).value || ""`, dpJS(sel))))
	if err != nil {
		t.Fatalf("value of %s: %v", sel, err)
	}
	return s
}

// dpJS quotes s as a JavaScript string literal.
func dpJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// dpHas is a JavaScript condition: sel matches an element whose text contains text.
func dpHas(sel, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%s)].some((e) => e.textContent.includes(%s))`, dpJS(sel), dpJS(text))
}

// dpAt is a JavaScript condition: the page is at path (without query) and done loading.
func dpAt(path string) string {
	return fmt.Sprintf(`location.pathname === %s && document.querySelector("#main h1") && !document.querySelector("#main[aria-busy]")`, dpJS(path))
}

// dpType clears the input sel and types text into it, as a person would. It focuses and sends
// key events itself: chromedp.SendKeys (v0.23.0) reads the node's attributes without the node's
// lock while DOM events update them, a data race the race detector reports.
func dpType(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Clear(chromedp.CSS(sel)), chromedp.Focus(chromedp.CSS(sel), chromedp.NodeVisible), chromedp.KeyEvent(text))
}

// dpClick clicks the first visible element sel matches.
func dpClick(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)
}

// dpSignIn signs in through the sign-in page and waits for the test overview.
func dpSignIn(t *testing.T, ctx context.Context, o *DashOwner) {
	t.Helper()
	dpDo(t, ctx, "open the sign-in page", chromedp.Navigate(dpURL("/login")))
	dpWait(t, ctx, "the sign-in form is ready", `!document.getElementById("login-submit").disabled`)
	dpDo(t, ctx, "fill the sign-in form",
		dpType("#login-email", o.Email), dpType("#login-password", o.Password), dpClick("#login-submit"))
	dpWait(t, ctx, "the overview after sign-in", dpAt("/test/overview"))
}

// dpGo opens path in the app and waits until its page has loaded.
func dpGo(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	dpDo(t, ctx, "open "+path, chromedp.Navigate(dpURL(path)))
	dpWait(t, ctx, path+" loaded", dpAt(strings.SplitN(path, "?", 2)[0]))
}
