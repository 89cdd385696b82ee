package conformance

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/openapi"
)

func init() { sectionTitles["D18"] = "published API documentation" }

// TestAPIDocs loads each API's reference page (D18) in headless Chromium and checks that the
// bundled renderer shows every operation of the served spec, that no request leaves the
// listener's origin, and that the console logs no error (a CSP refusal included). The pages
// load one after another: each renders a whole spec and runs axe over it, and five at once
// beside the suite's other cases left one past its browser deadline on a 2-core machine. Axe
// over a whole reference is most of a case's time (the dashboard's: 22 s of 28 s quiet, 94 s in
// a CI run), so each page gets four minutes instead of an ordinary page's ninety seconds.
func TestAPIDocs(t *testing.T) {
	t.Parallel()
	pages := []struct {
		name, base, path string
		load             func() (*openapi3.T, error)
	}{
		{"merchant", target.BaseURL, "/docs", openapi.LoadMerchant},
		{"operator", target.BaseURL, "/operator/docs", openapi.LoadOperator},
		{"App", target.BaseURL, "/app/docs", openapi.LoadApp},
		{"checkout", target.CheckoutURL, "/api/docs", openapi.LoadCheckout},
		{"dashboard", target.DashboardURL, "/api/docs", openapi.LoadDashboard},
	}
	for _, p := range pages {
		harness.Rule(t, "D18", "the "+p.name+" API reference renders every operation from this host alone", func(t *testing.T) {
			doc, err := p.load()
			if err != nil {
				t.Fatal(err)
			}
			var summaries []string
			for _, item := range doc.Paths.Map() {
				for _, op := range item.Operations() {
					summaries = append(summaries, op.Summary)
				}
			}
			ctx := harness.NewBrowserWithin(t, 4*time.Minute)
			w := watchPage(t, ctx, p.base)
			if err := chromedp.Do(ctx, chromedp.Navigate(p.base+p.path)); err != nil {
				t.Fatal(err)
			}
			missing := waitRendered(t, ctx, summaries, 60*time.Second)
			harness.Page(t, ctx, "apidocs-"+p.name)
			if len(missing) > 0 {
				t.Errorf("%d of %d operations not rendered, e.g. %q", len(missing), len(summaries), missing[0])
			}
			for _, problem := range w.problems() {
				t.Error(problem)
			}
		})
	}
}

// pageWatch collects what a page did that a docs page must not: requests to another origin,
// requests the browser blocked, console errors and uncaught exceptions.
type pageWatch struct {
	mu   sync.Mutex
	seen []string
}

func (w *pageWatch) add(format string, a ...any) {
	w.mu.Lock()
	w.seen = append(w.seen, fmt.Sprintf(format, a...))
	w.mu.Unlock()
}

func (w *pageWatch) problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

func watchPage(t *testing.T, ctx context.Context, origin string) *pageWatch {
	t.Helper()
	w := &pageWatch{}
	own, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(ev.Request.URL)
			switch {
			case err != nil:
				w.add("request to an unparsable URL %q", ev.Request.URL)
			case u.Scheme == "data" || u.Scheme == "blob" || u.Scheme == "about":
			case u.Scheme != own.Scheme || u.Host != own.Host:
				w.add("request leaves the host: %s %s", ev.Request.Method, ev.Request.URL)
			}
		case *network.EventLoadingFailed:
			if ev.BlockedReason != "" {
				w.add("request blocked (%s): %s", ev.BlockedReason, ev.ErrorText)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, strings.TrimSpace(string(a.Value)+" "+a.Description))
				}
				w.add("console.%s: %s", ev.Type, strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			msg := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
			w.add("uncaught exception: %s", msg)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				w.add("console error (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// waitRendered polls the renderer's shadow DOM until it shows every summary or the time is up,
// and returns the summaries it does not show.
func waitRendered(t *testing.T, ctx context.Context, summaries []string, limit time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(limit)
	const script = `(() => { const d = document.querySelector("rapi-doc");
		return d && d.shadowRoot ? d.shadowRoot.textContent : ""; })()`
	for {
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](script))
		if err != nil {
			t.Fatalf("read the rendered page: %v", err)
		}
		text = strings.Join(strings.Fields(text), " ")
		var missing []string
		for _, s := range summaries {
			if !strings.Contains(text, strings.Join(strings.Fields(s), " ")) {
				missing = append(missing, s)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(250 * time.Millisecond)
	}
}
