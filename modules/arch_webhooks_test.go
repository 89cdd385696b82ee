package modules_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The webhooks and events stores follow modules/README.md: they answer their module's
// sentinels (no documented error is built in adapters/postgres for them) and read no wall
// clock (the module passes the times it records). The text rule of the other stores is
// TestStoresAnswerSentinelsAndReadNoClock; these files join it.
func TestWebhookAndEventStoresAnswerSentinelsAndReadNoClock(t *testing.T) {
	built := regexp.MustCompile(`core\.(NotFound|InvalidField)\(|\.UnknownCursor\(\)`)
	clock := regexp.MustCompile(`time\.Now\(\)|\bnow\(\)`)
	checked := 0
	for _, glob := range []string{"adapters/postgres/webhook_*.go", "adapters/postgres/event_store.go"} {
		files, err := filepath.Glob(filepath.Join("..", glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			if m := built.FindString(string(b)); m != "" {
				t.Errorf("%s builds %s…: answer the module's store sentinel", f, m)
			}
			if m := clock.FindString(string(b)); m != "" {
				t.Errorf("%s reads the clock (%s): the module passes the time", f, m)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d files checked; is the layout intact?", checked)
	}
}
