package openapi

import (
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
