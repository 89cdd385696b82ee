package theme

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// luminance is the relative luminance of a #rrggbb colour (WCAG 2.2).
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	if len(hex) != 7 || hex[0] != '#' {
		t.Fatalf("%q is not a #rrggbb colour", hex)
	}
	var c [3]float64
	for i := range c {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatal(err)
		}
		s := float64(v) / 255
		if s <= 0.03928 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

func contrast(t *testing.T, a, b string) float64 {
	la, lb := luminance(t, Token(a)), luminance(t, Token(b))
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

// Every pair of tokens the pages put together meets WCAG 2.2 AA: 4.5:1 for text, 3:1 for
// control borders and the focus ring.
func TestTokenContrast(t *testing.T) {
	text := [][2]string{
		{"--k-ink", "--k-surface"}, {"--k-ink", "--k-bg"}, {"--k-ink", "--k-surface-sunken"},
		{"--k-ink-muted", "--k-surface"}, {"--k-ink-muted", "--k-bg"}, {"--k-ink-muted", "--k-surface-sunken"},
		{"--k-accent", "--k-surface"}, {"--k-accent", "--k-bg"}, {"--k-accent", "--k-accent-soft"},
		{"--k-accent-ink", "--k-accent"}, {"--k-accent-ink", "--k-accent-hover"},
		{"--k-success", "--k-success-bg"}, {"--k-info", "--k-info-bg"}, {"--k-info", "--k-surface"},
		{"--k-danger", "--k-danger-bg"}, {"--k-danger", "--k-surface"}, {"--k-surface", "--k-danger"},
		{"--k-attention", "--k-attention-bg"}, {"--k-refund", "--k-refund-bg"},
		{"--k-neutral", "--k-neutral-bg"}, {"--k-warning", "--k-warning-bg"},
		{"--k-test-ink", "--k-test-bg"}, {"--k-surface", "--k-test"}, {"--k-live-ink", "--k-live"},
	}
	for _, p := range text {
		if c := contrast(t, p[0], p[1]); c < 4.5 {
			t.Errorf("%s on %s: %.2f:1, text needs 4.5:1", p[0], p[1], c)
		}
	}
	nonText := [][2]string{
		{"--k-line-strong", "--k-surface"}, {"--k-focus", "--k-surface"}, {"--k-focus", "--k-bg"},
		{"--k-focus", "--k-test-bg"}, {"--k-danger", "--k-surface"}, {"--k-accent", "--k-surface"},
	}
	for _, p := range nonText {
		if c := contrast(t, p[0], p[1]); c < 3 {
			t.Errorf("%s against %s: %.2f:1, a border or focus ring needs 3:1", p[0], p[1], c)
		}
	}
}

// The live banner is not green: live mode moves real money and looks like it.
func TestLiveIsNotGreen(t *testing.T) {
	if Token("--k-live") == Token("--k-success") || Token("--k-live") == Token("--k-success-bg") {
		t.Fatal("the live environment uses the success colour")
	}
}

// Every status word the APIs answer has a badge of its own, and failed and disputed differ.
func TestBadgesPerState(t *testing.T) {
	for _, s := range []string{"succeeded", "processing", "failed", "disputed", "refunded", "partially_refunded",
		"canceled", "expired", "open", "complete", "declined", "pending", "needs_response", "under_review", "won", "lost"} {
		if !strings.Contains(string(css), ".badge-"+s) {
			t.Errorf("no .badge-%s in %s", s, FileName)
		}
	}
	if Token("--k-attention") == Token("--k-danger") {
		t.Error("disputed and failed share a colour")
	}
}

func TestServe(t *testing.T) {
	rec := httptest.NewRecorder()
	Serve(rec, httptest.NewRequest(http.MethodGet, "/assets/kassa.css", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") || !strings.Contains(rec.Body.String(), "--k-ink") {
		t.Fatalf("GET: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	req := httptest.NewRequest(http.MethodGet, "/assets/kassa.css", nil)
	req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
	rec = httptest.NewRecorder()
	Serve(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Fatalf("revalidation: %d", rec.Code)
	}
}
