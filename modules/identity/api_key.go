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

// APIKeySnapshot is the stored form of a key: what a store writes, and what it hands to
// RehydrateAPIKey. SecretHash is SHA-256 of the secret (HashSecret); the secret itself is
// never stored.
type APIKeySnapshot struct {
	ID, MerchantID, Name, Display string
	Env                           core.Environment
	SecretHash                    []byte
	Created                       time.Time
	LastUsed, RevokedAt           *time.Time
}

// APIKey is a merchant's secret key as it is kept and shown: never the secret, only its
// display form (prefix and last four characters) and its hash.
type APIKey struct {
	r APIKeySnapshot
}

// NewAPIKey checks name (trimmed) and env and makes a new key of the merchant with a fresh
// secret, which is returned once and never kept. A violation is a 400 naming name or mode.
func NewAPIKey(merchantID, name string, env core.Environment, now time.Time) (*APIKey, string, error) {
	name, err := checkKeyInput(name, env)
	if err != nil {
		return nil, "", err
	}
	secret, display, hash := newSecret(env)
	return &APIKey{r: APIKeySnapshot{
		ID: core.NewID(core.PrefixAPIKey), MerchantID: merchantID, Name: name, Display: display,
		Env: env, SecretHash: hash, Created: now,
	}}, secret, nil
}

// RehydrateAPIKey rebuilds a key from storage without validating it.
func RehydrateAPIKey(r APIKeySnapshot) *APIKey { return &APIKey{r: r} }

// Snapshot returns a copy of the key's state for storage.
func (k *APIKey) Snapshot() APIKeySnapshot {
	r := k.r
	r.SecretHash = append([]byte(nil), k.r.SecretHash...)
	r.LastUsed = copyTime(k.r.LastUsed)
	r.RevokedAt = copyTime(k.r.RevokedAt)
	return r
}

func (k *APIKey) ID() string            { return k.r.ID }
func (k *APIKey) MerchantID() string    { return k.r.MerchantID }
func (k *APIKey) Name() string          { return k.r.Name }
func (k *APIKey) Env() core.Environment { return k.r.Env }
func (k *APIKey) Created() time.Time    { return k.r.Created }
func (k *APIKey) Scope() core.Scope     { return core.Scope{MerchantID: k.r.MerchantID, Env: k.r.Env} }
func (k *APIKey) SecretHash() []byte    { return append([]byte(nil), k.r.SecretHash...) }
func (k *APIKey) LastUsed() *time.Time  { return copyTime(k.r.LastUsed) }
func (k *APIKey) RevokedAt() *time.Time { return copyTime(k.r.RevokedAt) }
func (k *APIKey) Revoked() bool         { return k.r.RevokedAt != nil }

// Display is the shareable form of the secret, e.g. "sk_test_…a1B2".
func (k *APIKey) Display() string { return k.r.Display }

// Revoke revokes the key at at; revoking a revoked key keeps its first revoked_at.
func (k *APIKey) Revoke(at time.Time) {
	if k.r.RevokedAt == nil {
		k.r.RevokedAt = &at
	}
}

// TouchDue reports whether a use at now is worth writing down: last_used is unset or at least
// lastUsedGranularity older than now.
func (k *APIKey) TouchDue(now time.Time) bool {
	return k.r.LastUsed == nil || now.Sub(*k.r.LastUsed) >= lastUsedGranularity
}

// Touch records a use at at when last_used is unset or more than lastUsedGranularity older;
// otherwise last_used stays (Store.TouchKey writes the same rule).
func (k *APIKey) Touch(at time.Time) {
	if k.r.LastUsed == nil || k.r.LastUsed.Before(at.Add(-lastUsedGranularity)) {
		k.r.LastUsed = &at
	}
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// AuthRecord is what authentication needs to know about the key a secret hashes to.
type AuthRecord struct {
	Key       *APIKey
	Onboarded bool       // the key's merchant
	TestClock *time.Time // frozen time of the key's sandbox clock (test keys; nil = real time)
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
