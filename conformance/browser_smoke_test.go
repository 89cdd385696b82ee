package conformance

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// TestBrowserHarness proves that the headless browser the page tests rely on starts, loads a
// page and runs its script; when it fails, every browser case would fail for the same reason.
func TestBrowserHarness(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>harness</title><p id="p">static</p>` +
			`<script>document.getElementById("p").textContent = "scripted";</script>`))
	}))
	defer srv.Close()
	ctx := harness.NewBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#p")))
	if err != nil {
		t.Fatal(err)
	}
	if title != "harness" || text != "scripted" {
		t.Fatalf("title %q, text %q; want harness, scripted", title, text)
	}
	harness.Screenshot(t, ctx, "harness-smoke")
}
