package identity

import (
	"crypto/sha256"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Secret key prefixes (interface 5.1).
const (
	SecretPrefixTest = "sk_test_"
	SecretPrefixLive = "sk_live_"
)

// secretRandomLength is the number of base62 characters after the prefix (core.NewSecretPart).
var secretRandomLength = len(core.NewSecretPart())

// APIKey is a merchant's secret key as it may be shown: never the secret, only its display
// form (prefix and last four characters).
type APIKey struct {
	ID, MerchantID, Name, Display string
	Env                           core.Environment
	Created                       time.Time
	LastUsed, RevokedAt           *time.Time
}

// Revoked reports whether the key has been revoked.
func (k *APIKey) Revoked() bool { return k.RevokedAt != nil }

// KeyRecord is what the store keeps of a key: the shown fields plus SHA-256 of the secret.
type KeyRecord struct {
	APIKey
	SecretHash []byte
}

// AuthRecord is what authentication needs to know about the key a secret hashes to.
type AuthRecord struct {
	Key        APIKey
	SecretHash []byte
	Onboarded  bool       // the key's merchant
	TestClock  *time.Time // frozen time of the key's sandbox clock (test keys; nil = real time)
}

// secretPrefix is the prefix of secrets of env.
func secretPrefix(env core.Environment) string {
	if env == core.EnvLive {
		return SecretPrefixLive
	}
	return SecretPrefixTest
}

// newSecret makes a fresh secret of env and its stored record fields.
func newSecret(env core.Environment) (secret, display string, hash []byte) {
	secret = secretPrefix(env) + core.NewSecretPart()
	return secret, displayOf(secret), HashSecret(secret)
}

// HashSecret is the stored form of a secret: SHA-256 of the whole string.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// displayOf is the shareable form of a secret: its prefix, an ellipsis and its last four
// characters, e.g. "sk_test_…a1B2".
func displayOf(secret string) string {
	prefix := SecretPrefixTest
	if strings.HasPrefix(secret, SecretPrefixLive) {
		prefix = SecretPrefixLive
	}
	return prefix + "…" + secret[len(secret)-4:]
}

// parseSecret checks the shape of a presented secret and returns the environment its prefix
// names. ok is false for a wrong prefix, charset or length.
func parseSecret(s string) (env core.Environment, ok bool) {
	switch {
	case strings.HasPrefix(s, SecretPrefixTest):
		env = core.EnvTest
	case strings.HasPrefix(s, SecretPrefixLive):
		env = core.EnvLive
	default:
		return "", false
	}
	rest := s[len(SecretPrefixTest):]
	if len(rest) != secretRandomLength {
		return "", false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "", false
		}
	}
	return env, true
}

// newKeyRecord makes a new key of the merchant and env and returns it with its secret, which
// is shown once and never stored.
func newKeyRecord(merchantID, name string, env core.Environment, now time.Time) (*KeyRecord, string) {
	secret, display, hash := newSecret(env)
	return &KeyRecord{
		APIKey: APIKey{
			ID: core.NewID(core.PrefixAPIKey), MerchantID: merchantID, Name: name, Display: display,
			Env: env, Created: now,
		},
		SecretHash: hash,
	}, secret
}
