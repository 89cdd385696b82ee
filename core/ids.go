package core

import (
	"crypto/rand"
	"strings"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Identifier prefixes (decisions D2).
const (
	PrefixSession  = "cs_"
	PrefixInvoice  = "in_"
	PrefixPayment  = "py_"
	PrefixProduct  = "prod_"
	PrefixPrice    = "price_"
	PrefixEvent    = "evt_"
	PrefixAPIKey   = "key_"
	PrefixMerchant = "mer_"
	PrefixRequest  = "req_"
)

// idLength is the number of random base62 characters in an identifier (D2).
const idLength = 24

// secretLength gives 40 base62 characters, about 238 bits, above the 192 bits D2 requires.
const secretLength = 40

// NewID returns prefix followed by 24 random base62 characters.
func NewID(prefix string) string { return prefix + RandomBase62(idLength) }

// NewSecretPart returns a random base62 string long enough for a secret (≥ 192 bits).
func NewSecretPart() string { return RandomBase62(secretLength) }

// RandomBase62 returns n characters drawn uniformly from the base62 alphabet using
// crypto/rand (rejection sampling, so there is no modulo bias).
func RandomBase62(n int) string {
	var sb strings.Builder
	sb.Grow(n)
	buf := make([]byte, n+n/2)
	for sb.Len() < n {
		if _, err := rand.Read(buf); err != nil {
			panic("core: crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			if b >= 248 { // 248 = 4*62; reject to keep the distribution uniform
				continue
			}
			sb.WriteByte(base62[b%62])
			if sb.Len() == n {
				break
			}
		}
	}
	return sb.String()
}

// HasIDShape reports whether s is prefix followed by exactly 24 base62 characters.
func HasIDShape(s, prefix string) bool {
	if !strings.HasPrefix(s, prefix) || len(s) != len(prefix)+idLength {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}
