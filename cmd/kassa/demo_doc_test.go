package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// docs/walkthrough.md shows what `make run` prints, word for word, with placeholders for the
// ids and secrets of a start and the default addresses.
func TestWalkthroughShowsTheDemoSteps(t *testing.T) {
	b, err := os.ReadFile("../../docs/walkthrough.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "`make run` prints")
	if i < 0 {
		t.Fatal("docs/walkthrough.md no longer shows what `make run` prints")
	}
	s = s[i:]
	j := strings.Index(s, "\n```\n")
	if j < 0 {
		t.Fatal("no ``` block follows `make run` prints")
	}
	s = s[j+len("\n```\n"):]
	shown := s[:strings.Index(s, "```\n")]
	printed := fmt.Sprintf(demoSteps, "http://127.0.0.1:8080", "http://127.0.0.1:8081", "http://127.0.0.1:8082",
		"mer_…", "sk_test_…", "whsec_…", demoEmail, demoPassword, "http://127.0.0.1:4000/", "127.0.0.1:4000")
	printed = strings.TrimSpace(printed) + "\n"
	if shown != printed {
		t.Errorf("the demo steps of docs/walkthrough.md differ from what kassa serve --demo prints.\ndocs:\n%s\nprinted:\n%s", shown, printed)
	}
}
