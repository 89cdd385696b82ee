package signing_test

import (
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/openapi/webhook"
)

// docs/webhooks.md says a receiver written for the common webhook verification libraries verifies
// Kassa's deliveries when given the whsec_… secret and the Service-Signature value. These
// cases hold that claim to one such library, the verifier of stripe-go (a test dependency
// only): it accepts what the server signs, also the two-signature header of a rotation, and
// refuses a changed body, a wrong secret and a stale timestamp; and the SDK's own verifier
// accepts what that library signs.

const (
	compatBody   = `{"id":"evt_Compat0000000000000001","object":"event","type":"checkout.session.completed","environment":"test","created":1795427798,"api_version":"2026-01-01","data":{"object":{"id":"cs_Compat"}}}`
	compatSecret = "whsec_kassaCompatibilitySecret0000000001"
	compatOld    = "whsec_kassaCompatibilitySecret0000000000"
)

func TestCommonLibraryVerifiesKassaSignatures(t *testing.T) {
	now := time.Now()
	body := []byte(compatBody)
	for name, header := range map[string]string{
		"one secret":               signing.Header(now, body, compatSecret),
		"rotation: new secret too": signing.Header(now, body, compatSecret, compatOld),
		"rotation: old secret too": signing.Header(now, body, compatOld, compatSecret),
	} {
		if err := stripewebhook.ValidatePayload(body, header, compatSecret); err != nil {
			t.Errorf("%s: %q refused: %v", name, header, err)
		}
	}
	if err := stripewebhook.ValidatePayload(body, signing.Header(now, body, compatSecret, compatOld), compatOld); err != nil {
		t.Errorf("during a rotation the old secret verifies too: %v", err)
	}
	refused := map[string]error{
		"changed body":    stripewebhook.ValidatePayload([]byte(compatBody+" "), signing.Header(now, body, compatSecret), compatSecret),
		"wrong secret":    stripewebhook.ValidatePayload(body, signing.Header(now, body, compatSecret), compatOld),
		"stale timestamp": stripewebhook.ValidatePayload(body, signing.Header(now.Add(-time.Hour), body, compatSecret), compatSecret),
	}
	for name, err := range refused {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSDKVerifiesTheCommonLibrarysSignatures(t *testing.T) {
	now := time.Now()
	signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{
		Payload: []byte(compatBody), Secret: compatSecret, Timestamp: now,
	})
	if err := webhook.Verify(signed.Payload, signed.Header, compatSecret, 5*time.Minute, now); err != nil {
		t.Fatalf("the SDK refused %q: %v", signed.Header, err)
	}
	if signed.Header != signing.Header(now, []byte(compatBody), compatSecret) {
		t.Fatalf("the library signs %q, the server %q", signed.Header, signing.Header(now, []byte(compatBody), compatSecret))
	}
}
