package conformance

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// axeRecorder is a testing.TB that keeps the errors Axe reports instead of failing.
type axeRecorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *axeRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestBrowserAxe proves that the accessibility check the page tests run finds what it must: a
// page with grey-on-grey text and an unlabelled field fails it, the same page fixed passes.
func TestBrowserAxe(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/bad" {
			_, _ = w.Write([]byte(`<!doctype html><html lang="en"><title>bad</title><main><h1>Bad</h1>` +
				`<p style="color:#aaa;background:#bbb">faint</p><input type="text"></main></html>`))
			return
		}
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><title>good</title><main><h1>Good</h1>` +
			`<p>plain</p><label for="f">Name</label><input id="f" type="text"></main></html>`))
	}))
	defer srv.Close()
	ctx := harness.NewBrowser(t)
	for _, c := range []struct {
		path string
		want []string
	}{{"/bad", []string{"color-contrast", "label"}}, {"/good", nil}} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+c.path)); err != nil {
			t.Fatal(err)
		}
		rec := &axeRecorder{TB: t}
		harness.Axe(rec, ctx, c.path)
		all := strings.Join(rec.errors, "\n")
		for _, rule := range c.want {
			if !strings.Contains(all, rule) {
				t.Errorf("%s: axe did not report %s; it reported:\n%s", c.path, rule, all)
			}
		}
		if c.want == nil && len(rec.errors) > 0 {
			t.Errorf("%s: axe reported a fixed page:\n%s", c.path, all)
		}
	}
}
