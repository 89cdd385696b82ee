package modules_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The text rules of modules/README.md that the import graph cannot see, checked on the source.

// readSources returns the non-test Go files matching glob (relative to the repository root).
func readSources(t *testing.T, glob string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", glob))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	if len(out) == 0 {
		t.Fatalf("no file matches %s", glob)
	}
	return out
}

// A Service gets every dependency from its checking constructor: no wiring setter that must
// be called before it works (checkout's EnablePayments and EnableBuyer were). A use case takes
// a context first; a method of Service named like a setter that takes none is a setter.
func TestNoWiringSetters(t *testing.T) {
	setter := regexp.MustCompile(`func \(\w+ \*Service\) (Enable|Set|Wire|Use)[A-Z]\w*\([^)]*\)`)
	for f, src := range readSources(t, "modules/*/*.go") {
		for _, m := range setter.FindAllString(src, -1) {
			if !strings.Contains(m, "context.Context") {
				t.Errorf("%s: %s: pass the dependency to NewService instead", f, m)
			}
		}
	}
}

// The stores of the modules that follow modules/README.md answer their module's sentinels:
// no documented error is built in adapters/postgres for them, and they read no wall clock (the
// module passes the times it records).
func TestStoresAnswerSentinelsAndReadNoClock(t *testing.T) {
	built := regexp.MustCompile(`core\.(NotFound|InvalidField)\(|\.UnknownCursor\(\)`)
	clock := regexp.MustCompile(`time\.Now\(\)|\bnow\(\)`)
	for _, glob := range []string{"adapters/postgres/catalog_store.go", "adapters/postgres/session_*.go",
		"adapters/postgres/payment_*.go", "adapters/postgres/charge_attempt_store.go",
		"adapters/postgres/webhook_*.go", "adapters/postgres/event_store.go"} {
		for f, src := range readSources(t, glob) {
			if m := built.FindString(src); m != "" {
				t.Errorf("%s builds %s…: answer the module's store sentinel", f, m)
			}
			if m := clock.FindString(src); m != "" {
				t.Errorf("%s reads the clock (%s): the module passes the time", f, m)
			}
		}
	}
}
