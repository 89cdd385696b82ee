// Package signing produces the webhook signature of D10 and seals webhook endpoint secrets for
// storage.
//
// Signature: `Service-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, with
// one v1 element per active secret (during a rotation the old secret stays valid for 24 h, so
// a delivery carries two). The HMAC key is the whole `whsec_…` string, prefix included.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// HeaderName is the HTTP header that carries the signature.
const HeaderName = "Service-Signature"

// Scheme is the name of the signature element (HMAC-SHA256 over "<t>.<body>").
const Scheme = "v1"

// Sign returns the hex HMAC-SHA256 of "<unix t>.<body>" keyed with the whole secret.
func Sign(secret string, t time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(t.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Header returns the value of the Service-Signature header for body sent at t: the timestamp
// followed by one v1 element per secret, in the order given (current secret first).
func Header(t time.Time, body []byte, secrets ...string) string {
	var sb strings.Builder
	sb.WriteString("t=")
	sb.WriteString(strconv.FormatInt(t.Unix(), 10))
	for _, s := range secrets {
		sb.WriteString("," + Scheme + "=")
		sb.WriteString(Sign(s, t, body))
	}
	return sb.String()
}
