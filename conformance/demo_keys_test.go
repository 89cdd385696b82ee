package conformance

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// Each `make run` (kassa serve --demo) prints a new demo test key; the one the start before
// printed is revoked, so that restarts do not pile up active keys.
func TestDemoRevokesThePreviousKey(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "RUN", "a demo start revokes the test key the previous start printed; the printed reference pages answer", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs a server the harness started: the case launches kassa serve --demo twice")
		}
		demoEnv := harness.Options{Env: map[string]string{"KASSA_DEMO": "true", "KASSA_DEMO_WEBHOOK_ADDR": "127.0.0.1:9"}}
		keyRe := regexp.MustCompile(`Test key\s+(sk_test_\S+)`)
		printedKey := func(s *harness.Target) string {
			text := waitFor(t, "the demo's steps", func() (string, bool) {
				b, _ := os.ReadFile(s.LogPath)
				return string(b), bytes.Contains(b, []byte("Test mailbox the buyer's receipt."))
			})
			return printed(t, text, "a test key", keyRe)
		}
		first, drop, err := target.Lone(context.Background(), "demo-keys-1", demoEnv)
		if err != nil {
			t.Fatal(err)
		}
		defer drop()
		key1 := printedKey(first)
		// The printed reference pages are where the demo says.
		text, _ := os.ReadFile(first.LogPath)
		for _, re := range []*regexp.Regexp{regexp.MustCompile(`API\s+\S+\s+\(reference: (\S+)\)`),
			regexp.MustCompile(`Dashboard\s+\S+\s+\(JSON API reference: (\S+)\)`)} {
			u := printed(t, string(text), "a reference page", re)
			r, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("the printed reference %s: %d %s", u, r.StatusCode, r.Header.Get("Content-Type"))
			}
		}
		if r := rawAt(t, first.BaseURL, "GET", "/v1/checkout/sessions", key1, "", nil); r.Status != 200 {
			t.Fatalf("the first demo key: %d %s", r.Status, r.Body)
		}
		first.Stop()

		second, err := first.Sibling(context.Background(), "demo-keys-2", demoEnv)
		if err != nil {
			t.Fatal(err)
		}
		defer second.Stop()
		key2 := printedKey(second)
		if key2 == key1 {
			t.Fatal("the second start printed the same key")
		}
		if r := rawAt(t, second.BaseURL, "GET", "/v1/checkout/sessions", key2, "", nil); r.Status != 200 {
			t.Fatalf("the new demo key: %d %s", r.Status, r.Body)
		}
		if r := rawAt(t, second.BaseURL, "GET", "/v1/checkout/sessions", key1, "", nil); r.Status != 401 {
			t.Fatalf("the previous demo key still works: %d %s", r.Status, r.Body)
		}

		third, err := first.Sibling(context.Background(), "demo-keys-3", demoEnv)
		if err != nil {
			t.Fatal(err)
		}
		defer third.Stop()
		key3 := printedKey(third)
		if r := rawAt(t, third.BaseURL, "GET", "/v1/checkout/sessions", key2, "", nil); r.Status != 401 {
			t.Fatalf("the second demo key still works after a third start: %d %s", r.Status, r.Body)
		}
		if r := rawAt(t, third.BaseURL, "GET", "/v1/checkout/sessions", key3, "", nil); r.Status != 200 {
			t.Fatalf("the third demo key: %d %s", r.Status, r.Body)
		}
	})
}
