package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kassa-pay/kassa/conformance/harness"
)

// The newcomer's path of issue 3's "Done means": `kassa serve --demo` (what `make run` starts)
// prints its steps; the case follows them as printed: it starts `kassa listen` with the printed
// secret, runs the printed curl, pays 4242 on the hosted page in the browser, sees the receiver
// verify the signature, and finds the payment and the delivery in the dashboard with the
// printed login.

func init() { sectionTitles["RUN"] = "the steps make run prints" }

// lockedBuffer collects a process's output while the case reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls get until it holds, failing after 30 s with what and the last output.
func waitFor(t *testing.T, what string, get func() (string, bool)) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, ok := get()
		if ok {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s; output:\n%s", what, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// printed finds re's first group in the demo's text, failing when it is missing.
func printed(t *testing.T, text, what string, re *regexp.Regexp) string {
	t.Helper()
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the demo did not print %s (%s); it printed:\n%s", what, re, text)
	}
	return m[1]
}

func TestMakeRunWalkthrough(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "RUN", "the printed steps work: curl, pay 4242 on the hosted page, the local receiver verifies the webhook, the dashboard shows payment and delivery", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs a server the harness started: the case launches kassa serve --demo and kassa listen")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hookAddr := l.Addr().String()
		l.Close()
		srv, err := target.Sibling(context.Background(), "demo", harness.Options{Env: map[string]string{
			"KASSA_DEMO": "true", "KASSA_DEMO_WEBHOOK_ADDR": hookAddr}})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()

		// What the demo printed (its stdout shares the log file with the JSON log lines).
		text := waitFor(t, "the demo's steps", func() (string, bool) {
			b, _ := os.ReadFile(srv.LogPath)
			return string(b), bytes.Contains(b, []byte("Test mailbox the buyer's receipt."))
		})
		text = text[strings.Index(text, "Kassa is running."):]
		key := printed(t, text, "a test key", regexp.MustCompile(`Test key\s+(sk_test_\S+)`))
		listenAddr := printed(t, text, "the receiver's address", regexp.MustCompile(`kassa listen --addr (\S+) --secret whsec_`))
		secret := printed(t, text, "a webhook secret", regexp.MustCompile(`kassa listen --addr \S+ --secret (whsec_\S+)`))
		curl := printed(t, text, "a curl", regexp.MustCompile(`(?s)\n(curl -s .*?-d '[^']*')\n`))
		dashURL := printed(t, text, "the dashboard sign-in", regexp.MustCompile(`Sign in to the dashboard at (\S+)/login`))
		email := printed(t, text, "the login e-mail", regexp.MustCompile(`e-mail\s+(\S+)`))
		password := printed(t, text, "the login password", regexp.MustCompile(`password\s+(\S+)`))
		if listenAddr != hookAddr || dashURL != srv.DashboardURL || !strings.Contains(curl, srv.BaseURL) {
			t.Fatalf("the steps name %s, %s and %q; the server is at %s, %s, %s", listenAddr, dashURL, curl,
				hookAddr, srv.DashboardURL, srv.BaseURL)
		}

		// Step 1: the receiver, as printed.
		var recv lockedBuffer
		listen := exec.Command(target.Binary(), "listen", "--addr", listenAddr, "--secret", secret)
		listen.Stdout, listen.Stderr = &recv, &recv
		if err := listen.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = listen.Process.Kill(); _ = listen.Wait() }()
		waitFor(t, "kassa listen to start", func() (string, bool) {
			return recv.String(), strings.Contains(recv.String(), "Receiving webhooks")
		})

		// Step 2: the curl, as printed (by the shell when curl is installed, else the same
		// request from Go); the session is then read through the validating client.
		var created struct {
			ID          string `json:"id"`
			CheckoutURL string `json:"checkout_url"`
		}
		if _, err := exec.LookPath("curl"); err == nil {
			out, err := exec.Command("bash", "-c", curl).Output()
			if err != nil || json.Unmarshal(out, &created) != nil || created.ID == "" {
				t.Fatalf("the printed curl: %v\n%s", err, out)
			}
		} else {
			body := curl[strings.Index(curl, "-d '")+4 : len(curl)-1]
			r := rawAt(t, srv.BaseURL, "POST", "/v1/checkout/sessions", key, body, map[string]string{"Idempotency-Key": "walkthrough-" + key[len(key)-8:]})
			if r.Status != 200 || json.Unmarshal(r.Body, &created) != nil {
				t.Fatalf("create session: %d %s", r.Status, r.Body)
			}
		}
		c := client(t, key)
		if s := csGet(t, c, created.ID); s.Status != "open" || s.CheckoutUrl != created.CheckoutURL {
			t.Fatalf("session %s: %s at %s", s.Id, s.Status, s.CheckoutUrl)
		}

		// Step 3: pay with 4242 on the hosted page.
		ctx := harness.NewBrowser(t)
		pgOpen(t, ctx, created.CheckoutURL, "#card-form")
		pgCard(t, ctx, "4242 4242 4242 4242")
		pgClick(t, ctx, "pay-card")
		pgWaitText(t, ctx, "#heading", "payment was received")
		paid := csGet(t, c, created.ID)
		if paid.Status != "complete" || paid.Payment == nil || paid.Payment.Status != "succeeded" {
			t.Fatalf("after paying: session %s, payment %+v", paid.Status, paid.Payment)
		}
		out := waitFor(t, "the receiver to verify checkout.session.completed", func() (string, bool) {
			s := recv.String()
			for _, line := range strings.Split(s, "\n") {
				if strings.Contains(line, "checkout.session.completed") && strings.HasSuffix(line, "signature verified") {
					return s, true
				}
			}
			return s, false
		})
		if strings.Contains(out, "NOT verified") {
			t.Fatalf("the receiver refused a delivery:\n%s", out)
		}

		// Step 4: the dashboard with the printed login.
		dpDo(t, ctx, "open the sign-in page", chromedp.Navigate(dashURL+"/login"))
		dpWait(t, ctx, "the sign-in form is ready", `!document.getElementById("login-submit").disabled`)
		dpDo(t, ctx, "sign in", dpType("#login-email", email), dpType("#login-password", password), dpClick("#login-submit"))
		dpWait(t, ctx, "the overview", dpAt("/test/overview"))
		dpDo(t, ctx, "open payments", chromedp.Navigate(dashURL+"/test/payments"))
		dpWait(t, ctx, "the payment in the list", `document.querySelector('a[data-payment="`+paid.Payment.Id+`"]')`)
		dpDo(t, ctx, "open the payment", dpClick(`a[data-payment="`+paid.Payment.Id+`"]`))
		dpWait(t, ctx, "its fee breakdown and events", dpHas("#fee-breakdown", "Total fee")+" && "+dpHas("#payment-events", "checkout.session.completed"))
		harness.Screenshot(t, ctx, "walkthrough-payment")
		dpDo(t, ctx, "open webhooks", chromedp.Navigate(dashURL+"/test/webhooks"))
		dpWait(t, ctx, "the demo endpoint", dpHas("#main", "http://"+hookAddr+"/"))
		dpDo(t, ctx, "open the endpoint", chromedp.Evaluate[chromedp.Void](
			`[...document.querySelectorAll("#main a")].find((a) => a.textContent.includes(`+dpJS("http://"+hookAddr+"/")+`)).click()`))
		dpWait(t, ctx, "a succeeded checkout.session.completed delivery",
			`[...document.querySelectorAll("#delivery-log tbody tr")].some((r) => r.textContent.includes("checkout.session.completed") && r.textContent.includes("succeeded"))`)
		harness.Screenshot(t, ctx, "walkthrough-delivery")
	})
}
