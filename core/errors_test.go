package core

import (
	"errors"
	"testing"
)

func TestFieldCode(t *testing.T) {
	cases := map[string]string{
		"customer_email":      "customer_email_invalid",
		"line_items.0.amount": "amount_invalid",
		"price.unit_amount":   "unit_amount_invalid",
		"images.3":            "images_invalid",
		"metadata.foo":        "metadata_invalid",
		"price.metadata.x":    "metadata_invalid",
		"":                    "parameter_invalid",
		"recurring.interval":  "interval_invalid",
	}
	for in, want := range cases {
		if got := FieldCode(in); got != want {
			t.Errorf("FieldCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorIsMatchesTypeAndCode(t *testing.T) {
	err := ErrAmountTooSmall.At("amount").Msg("too small")
	if !errors.Is(err, ErrAmountTooSmall) {
		t.Fatal("errors.Is should match on type and code")
	}
	if errors.Is(err, ErrAmountTooLarge) {
		t.Fatal("different code must not match")
	}
}
