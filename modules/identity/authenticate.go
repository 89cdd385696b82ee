package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// lastUsedGranularity bounds how often a key's last_used is written.
const lastUsedGranularity = time.Minute

func authError(msg string) *core.Error {
	return core.NewError(core.TypeAuthentication, "invalid_api_key", "", msg)
}

// Authentication failures (all 401 authentication_error / invalid_api_key). Each says which
// case applies and nothing about other merchants or keys.
var (
	ErrNoAPIKey        = authError("No API key provided. Send Authorization: Bearer <API_KEY>.")
	ErrNotBearer       = authError("The Authorization header must use the Bearer scheme: Authorization: Bearer <API_KEY>.")
	ErrMalformedAPIKey = authError("Malformed API key. A secret key is sk_test_ or sk_live_ followed by letters and digits.")
	ErrUnknownAPIKey   = authError("Invalid API key provided. Check that you copied the whole key and that it has not been replaced.")
	ErrRevokedAPIKey   = authError("This API key was revoked.")
	ErrAPIKeyModeClash = authError("This API key's prefix does not match its mode; create a new key.")
)

// Authenticate turns the value of an Authorization header into the caller it authorises. Every
// failure is a 401 authentication_error / invalid_api_key whose message names the case. Nothing
// is cached: a revoked key fails on its next request.
func (s *Service) Authenticate(ctx context.Context, authorization string) (core.Caller, error) {
	h := strings.TrimSpace(authorization)
	if h == "" {
		return core.Caller{}, ErrNoAPIKey
	}
	scheme, token, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return core.Caller{}, ErrNotBearer
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return core.Caller{}, ErrNoAPIKey
	}
	env, ok := parseSecret(token)
	if !ok {
		return core.Caller{}, ErrMalformedAPIKey
	}
	hash := HashSecret(token)
	rec, err := s.store.KeyByHash(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return core.Caller{}, ErrUnknownAPIKey
	}
	if err != nil {
		return core.Caller{}, err
	}
	k := rec.Key
	if subtle.ConstantTimeCompare(k.SecretHash(), hash) != 1 {
		return core.Caller{}, ErrUnknownAPIKey
	}
	if k.Revoked() {
		return core.Caller{}, ErrRevokedAPIKey
	}
	if k.Env() != env {
		return core.Caller{}, ErrAPIKeyModeClash
	}
	now := s.clock.Now()
	scope := k.Scope()
	if k.TouchDue(now) {
		// Best effort: a failed bookkeeping write must not refuse a valid key.
		_ = s.store.TouchKey(ctx, scope, k.ID(), now)
	}
	return core.Caller{
		Scope:     scope,
		Onboarded: rec.Onboarded,
		KeyID:     k.ID(),
		TestClock: rec.TestClock,
	}, nil
}
