package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser tests drive the hosted pages and the dashboard in a real headless Chromium (Debian's
// `chromium`, driven by chromedp). One browser process serves the whole run; every test gets a
// tab in a browser context of its own (its own cookies and storage), and at most
// maxBrowserTabs tests hold a tab at once, so a 2-core machine is not swamped.
//
// Where the browser comes from: $KASSA_CHROMIUM, else chromium / chromium-browser /
// google-chrome on PATH. `make test` runs .ci/chromium.sh first, which installs Debian's
// chromium when it is missing, and sets KASSA_REQUIRE_BROWSER=1 so that a missing browser fails
// the run instead of skipping its tests.

const (
	maxBrowserTabs = 3
	// browserTestTimeout bounds one browser test, so a hung page cannot hang the suite.
	browserTestTimeout = 90 * time.Second
)

var (
	browserOnce   sync.Once
	browserRoot   context.Context
	browserCancel context.CancelFunc
	browserErr    error
	browserSlots  = make(chan struct{}, maxBrowserTabs)
)

// ChromiumPath is the browser binary the harness runs, or "" when none is found.
func ChromiumPath() string {
	if p := os.Getenv("KASSA_CHROMIUM"); p != "" {
		return p
	}
	// Debian's /usr/bin/chromium is a wrapper script; the real binary beside it starts faster
	// and without the wrapper's environment probing.
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		return "/usr/lib/chromium/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser() {
	path := ChromiumPath()
	if path == "" {
		browserErr = fmt.Errorf("no Chromium found (install Debian's chromium, or set KASSA_CHROMIUM)")
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	root, cancelRoot := chromedp.NewContext(alloc)
	// The first action on a context starts the browser; it lives as long as root.
	if err := chromedp.Do(root); err != nil {
		cancelRoot()
		cancelAlloc()
		browserErr = fmt.Errorf("start %s: %w", path, err)
		return
	}
	browserRoot = root
	browserCancel = func() { cancelRoot(); cancelAlloc() }
}

// NewBrowser returns a chromedp (v0.23, generic API: chromedp.Do / chromedp.Run, docs in the
// module's docs/API.md) context for one test: a new tab in a browser context of its
// own, closed when the test ends, with a deadline of browserTestTimeout. Without a browser the
// test is skipped, unless KASSA_REQUIRE_BROWSER=1 (as under `make test`), where it fails.
func NewBrowser(t testing.TB) context.Context {
	t.Helper()
	return NewBrowserWithin(t, browserTestTimeout)
}

// NewBrowserWithin is NewBrowser with a deadline of limit, for a page whose check takes longer
// than an ordinary page's by its nature: axe over a whole API reference takes 20–30 s on a quiet
// 2-core machine and three to four times that beside the suite's parallel cases.
func NewBrowserWithin(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	browserOnce.Do(startBrowser)
	if browserErr != nil {
		if os.Getenv("KASSA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("browser test: %v", browserErr)
		}
		t.Skipf("browser test skipped: %v", browserErr)
	}
	browserSlots <- struct{}{}
	tab, cancelTab := chromedp.NewContext(browserRoot, chromedp.WithNewBrowserContext())
	// Open the tab before deriving the deadline: chromedp ties a target's life to the context
	// of its first action.
	if err := chromedp.Do(tab); err != nil {
		cancelTab()
		<-browserSlots
		t.Fatalf("browser test: open a tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tab, limit)
	t.Cleanup(func() {
		cancel()
		cancelTab()
		<-browserSlots
	})
	return ctx
}

// CloseBrowser ends the shared browser process; TestMain calls it after the run.
func CloseBrowser() {
	if browserCancel != nil {
		browserCancel()
	}
}

// Screenshot saves a full-page PNG of the tab as out/screenshots/<name>.png so that a person can
// look at the pages a run produced. A failure to capture fails the test.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	// A page that has just navigated may not be laid out yet ("Cannot take screenshot with 0
	// width"): try again for a moment. A screenshot is a record of the page, not an assertion,
	// so one that still cannot be taken is logged, not failed.
	var png []byte
	var err error
	for try := 0; try < 20; try++ {
		if png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil { // quality 100 = PNG
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Logf("screenshot %s not taken: %v", name, err)
		return
	}
	dir := filepath.Join(ModuleRoot(), "out", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, safeName(name)+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
