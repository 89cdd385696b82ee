package openapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestSpecsLoadAndValidate(t *testing.T) {
	for name, load := range map[string]func() (any, error){
		"merchant":  func() (any, error) { return LoadMerchant() },
		"operator":  func() (any, error) { return LoadOperator() },
		"checkout":  func() (any, error) { return LoadCheckout() },
		"dashboard": func() (any, error) { return LoadDashboard() },
	} {
		if _, err := load(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Every merchant POST (the operations that take an Idempotency-Key) names its idempotency
// shape in x-kassa-idempotency, which the gate follows, and says the same in its description.
func TestEveryKeyedOperationDocumentsItsIdempotencyShape(t *testing.T) {
	doc, err := LoadMerchant()
	if err != nil {
		t.Fatal(err)
	}
	said := map[string]string{
		"transaction": "**Idempotency (one transaction):**",
		"phases":      "**Idempotency (phases):**",
	}
	n := 0
	for path, item := range doc.Paths.Map() {
		op := item.Post
		if op == nil {
			continue
		}
		n++
		shape, _ := op.Extensions["x-kassa-idempotency"].(string)
		want, ok := said[shape]
		if !ok {
			t.Errorf("POST %s: x-kassa-idempotency %q, want transaction or phases", path, shape)
			continue
		}
		if !strings.Contains(op.Description, want) {
			t.Errorf("POST %s: description does not say %q", path, want)
		}
		for other, text := range said {
			if other != shape && strings.Contains(op.Description, text) {
				t.Errorf("POST %s (%s): description says %q", path, shape, text)
			}
		}
	}
	if n == 0 {
		t.Fatal("no POST operation")
	}
}

// decisionRef matches a citation of an internal design document or work item ("D5",
// "interface 5.2", "section 4.2", "§ 3", "issue 10") that means nothing to a reader of the
// reference.
var decisionRef = regexp.MustCompile(`\bD[0-9]{1,2}\b|\binterface [0-9]+(\.[0-9]+)?\b|\b[Ss]ection [0-9]+(\.[0-9]+)*\b|§|\b[Ii]ssue [0-9]+\b`)

// The specs, as written and as served (the reference pages render them), the README, every
// document under docs/ and modules/README.md say what they mean instead of citing internal
// decision or section numbers.
func TestSpecsCiteNoDecisionNumbers(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	served, err := filepath.Glob("gen/*.json")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	files = append(append(append(files, served...), docs...), "../README.md", "../modules/README.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := decisionRef.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q: %s", f, i+1, m, strings.TrimSpace(line))
			}
		}
	}
}

// A served document names the server it came from in servers, whatever the spec's default.
func TestServedNamesTheServer(t *testing.T) {
	doc, err := Served(MerchantJSON, "https://api.shop.example/")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Servers []struct{ URL string } `json:"servers"`
		Paths   map[string]any         `json:"paths"`
	}
	if err := json.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Servers) != 1 || got.Servers[0].URL != "https://api.shop.example" || got.Paths["/v1/checkout/sessions"] == nil {
		t.Fatalf("servers %+v, %d paths", got.Servers, len(got.Paths))
	}
	if _, err := load("served", doc); err != nil {
		t.Fatalf("the served document is no longer valid: %v", err)
	}
	if same, _ := Served(MerchantJSON, ""); string(same) != string(MerchantJSON) {
		t.Fatal("an empty base URL changed the document")
	}
}
