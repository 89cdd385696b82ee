package openapi

import "testing"

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
