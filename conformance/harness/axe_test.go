package harness

import "testing"

// The vendored axe-core is the version axe.go names, unchanged.
func TestAxeVendored(t *testing.T) {
	if got := axeFileSHA256(); got != axeSHA256 {
		t.Fatalf("axe/axe.min.js has SHA-256 %s, axe.go expects %s for axe-core %s", got, axeSHA256, axeVersion)
	}
}
