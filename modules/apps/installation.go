package apps

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Token prefixes: the token decides the environment an App API request reads.
const (
	PrefixLiveToken = "at_live_"
	PrefixTestToken = "at_test_"
)

// InstallationSnapshot is an installation's stored state.
type InstallationSnapshot struct {
	ID            string // UUID
	AppID         string
	MerchantID    string
	Scopes        []string
	LiveTokenHash []byte
	TestTokenHash []byte
	Created       time.Time
	RevokedAt     *time.Time
	// LastUsedAt is when a token of the installation last authenticated (to the minute), nil
	// when never.
	LastUsedAt *time.Time
}

// Installation is an app installed on one merchant, with the scopes the merchant granted and
// one token per environment.
type Installation struct{ s InstallationSnapshot }

// Tokens are an installation's two access tokens, shown once.
type Tokens struct {
	Live string
	Test string
}

// NewInstallation installs app on merchantID with scopes (empty: every scope the app
// registered) and returns it with its tokens (only their SHA-256 hashes are kept).
func NewInstallation(app *App, merchantID string, scopes []string, now time.Time) (*Installation, Tokens, error) {
	granted, err := app.grant("scopes", scopes)
	if err != nil {
		return nil, Tokens{}, err
	}
	t := Tokens{Live: PrefixLiveToken + core.NewSecretPart(), Test: PrefixTestToken + core.NewSecretPart()}
	return &Installation{s: InstallationSnapshot{
		ID: newUUID(), AppID: app.ID(), MerchantID: merchantID, Scopes: granted,
		LiveTokenHash: hashSecret(t.Live), TestTokenHash: hashSecret(t.Test), Created: now,
	}}, t, nil
}

// RehydrateInstallation rebuilds a stored installation.
func RehydrateInstallation(s InstallationSnapshot) *Installation { return &Installation{s: s} }

// Snapshot returns a copy of the installation's state.
func (i *Installation) Snapshot() InstallationSnapshot {
	s := i.s
	s.Scopes = slices.Clone(s.Scopes)
	s.LiveTokenHash = slices.Clone(s.LiveTokenHash)
	s.TestTokenHash = slices.Clone(s.TestTokenHash)
	if s.RevokedAt != nil {
		t := *s.RevokedAt
		s.RevokedAt = &t
	}
	if s.LastUsedAt != nil {
		t := *s.LastUsedAt
		s.LastUsedAt = &t
	}
	return s
}

func (i *Installation) ID() string         { return i.s.ID }
func (i *Installation) AppID() string      { return i.s.AppID }
func (i *Installation) MerchantID() string { return i.s.MerchantID }
func (i *Installation) Scopes() []string   { return slices.Clone(i.s.Scopes) }
func (i *Installation) Created() time.Time { return i.s.Created }
func (i *Installation) Revoked() bool      { return i.s.RevokedAt != nil }

// RevokedAt is when the installation was uninstalled (nil while installed).
func (i *Installation) RevokedAt() *time.Time {
	if i.s.RevokedAt == nil {
		return nil
	}
	t := *i.s.RevokedAt
	return &t
}

// LastUsed is when a token of the installation last authenticated an App API request (to the
// minute), nil when never.
func (i *Installation) LastUsed() *time.Time {
	if i.s.LastUsedAt == nil {
		return nil
	}
	t := *i.s.LastUsedAt
	return &t
}

// HasScope reports whether the merchant granted scope.
func (i *Installation) HasScope(scope string) bool { return slices.Contains(i.s.Scopes, scope) }

// Uninstall revokes both tokens at now. Uninstalling twice is refused.
func (i *Installation) Uninstall(now time.Time) error {
	if i.s.RevokedAt != nil {
		return ErrInstallationMissing
	}
	i.s.RevokedAt = &now
	return nil
}

// tokenEnv returns the environment a token's prefix names, and whether it has a token's shape:
// the prefix and 40 base62 characters.
func tokenEnv(token string) (core.Environment, bool) {
	var env core.Environment
	var rest string
	switch {
	case strings.HasPrefix(token, PrefixLiveToken):
		env, rest = core.EnvLive, token[len(PrefixLiveToken):]
	case strings.HasPrefix(token, PrefixTestToken):
		env, rest = core.EnvTest, token[len(PrefixTestToken):]
	default:
		return "", false
	}
	if len(rest) != len(core.NewSecretPart()) {
		return "", false
	}
	for _, c := range rest {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "", false
		}
	}
	return env, true
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("apps: no randomness: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// IsUUID reports whether s has the canonical UUID form (lower-case hex).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// HashToken is the SHA-256 of a token, the form in which it is stored and looked up.
func HashToken(token string) []byte { return hashSecret(token) }
