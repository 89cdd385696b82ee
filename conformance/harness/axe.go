package harness

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axe-core, vendored (axe/README.md), run in the page under test by Axe.
const (
	axeVersion = "4.14.1"
	axeSHA256  = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
)

//go:embed axe/axe.min.js
var axeSource string

// AxeTags are the rule sets every page is held to: WCAG 2.0, 2.1 and 2.2, levels A and AA.
var AxeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"}

// axeViolation is one failed rule as the page reports it.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeRun is the script that runs axe on the whole document (open shadow roots included) and
// answers the violations with up to five example nodes each.
var axeRun = fmt.Sprintf(`axe.run(document, {runOnly: {type: "tag", values: %s}, resultTypes: ["violations"], iframes: false})
  .then((r) => r.violations.map((v) => ({id: v.id, impact: v.impact || "", help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => [].concat(...n.target).join(" ") + " — " +
      (n.failureSummary || "").replace(/\s+/g, " ").slice(0, 240))})))`, jsArray(AxeTags))

func jsArray(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Axe runs axe-core on the tab's current page and fails the test (without stopping it) for
// every WCAG 2.2 A/AA violation, naming the page. The script is injected through the DevTools
// protocol, which the pages' Content-Security-Policy does not govern.
func Axe(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof window.axe === "object"`))
	if err != nil {
		t.Fatalf("axe on %s: %v", page, err)
	}
	if !loaded {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](axeSource)); err != nil {
			t.Fatalf("axe on %s: inject: %v", page, err)
		}
	}
	vs, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe on %s: run: %v", page, err)
	}
	for _, v := range vs {
		t.Errorf("axe on %s: %s (%s): %s\n    %s", page, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n    "))
	}
}

// Page records a page as a person would meet it: axe-core's check (Axe) and a screenshot
// (Screenshot) under name.
func Page(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	Axe(t, ctx, name)
	Screenshot(t, ctx, name)
}

// axeFileSHA256 is the SHA-256 of the embedded axe.min.js (checked by a test against axeSHA256).
func axeFileSHA256() string {
	sum := sha256.Sum256([]byte(axeSource))
	return hex.EncodeToString(sum[:])
}
