package apps

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// CodeLifetime is how long an authorization code may be exchanged.
const CodeLifetime = 10 * time.Minute

// PrefixCode is the prefix of an authorization code.
const PrefixCode = "ac_"

// OAuthError is an error of the authorization code flow in the terms of RFC 6749: Code is the
// `error` value. Redirect reports whether it may be sent to the redirect URI (false for an
// unknown client or redirect URI, which are shown to the merchant instead); Status is the HTTP
// status of the token endpoint's answer.
type OAuthError struct {
	Code        string
	Description string
	Redirect    bool
	Status      int
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

func oauthErr(code, description string) *OAuthError {
	return &OAuthError{Code: code, Description: description, Redirect: true, Status: http.StatusBadRequest}
}

// AuthorizationRequest is the query of GET /oauth/authorize.
type AuthorizationRequest struct {
	ResponseType        string
	ClientID            string
	RedirectURI         string
	Scope               string
	State               string
	CodeChallenge       string
	CodeChallengeMethod string
}

// Consent is a checked authorization request: what the merchant is asked to grant.
type Consent struct {
	App     *App
	Scopes  []string
	Request AuthorizationRequest
}

// CodeSnapshot is a stored authorization code (its hash, never the code).
type CodeSnapshot struct {
	Hash           []byte
	AppID          string
	MerchantID     string
	RedirectURI    string
	Scopes         []string
	Challenge      string
	Created        time.Time
	Expires        time.Time
	UsedAt         *time.Time
	InstallationID *string
}

// CheckAuthorization validates an authorization request. An unknown client or a redirect URI
// the app did not register is an *OAuthError with Redirect false; every other error may be
// sent to the redirect URI.
func (s *Service) CheckAuthorization(ctx context.Context, req AuthorizationRequest) (*Consent, error) {
	a, err := s.store.AppByClientID(ctx, req.ClientID)
	if errors.Is(err, ErrNotFound) {
		return nil, &OAuthError{Code: "invalid_client", Description: "Unknown client_id.", Status: http.StatusBadRequest}
	}
	if err != nil {
		return nil, err
	}
	if req.RedirectURI == "" || !slices.Contains(a.s.RedirectURIs, req.RedirectURI) {
		return nil, &OAuthError{Code: "invalid_request", Description: "redirect_uri is not one the app registered.", Status: http.StatusBadRequest}
	}
	if req.ResponseType != "code" {
		return nil, oauthErr("unsupported_response_type", "response_type must be code.")
	}
	if req.CodeChallengeMethod != "S256" || !validVerifierShape(req.CodeChallenge) || len(req.CodeChallenge) != 43 {
		return nil, oauthErr("invalid_request", "PKCE is required: send code_challenge (S256) and code_challenge_method=S256.")
	}
	scopes, err := a.grant("scope", strings.Fields(req.Scope))
	if err != nil {
		var de *core.Error
		if errors.As(err, &de) {
			return nil, oauthErr("invalid_scope", de.Message)
		}
		return nil, err
	}
	return &Consent{App: a, Scopes: scopes, Request: req}, nil
}

// Approve records the merchant's consent and returns the authorization code (single use,
// CodeLifetime long, bound to the client, the redirect URI and the challenge).
func (s *Service) Approve(ctx context.Context, c *Consent, merchantID string) (string, error) {
	now := s.clock.Now()
	code := PrefixCode + core.NewSecretPart()
	err := s.store.CreateCode(ctx, CodeSnapshot{
		Hash: hashSecret(code), AppID: c.App.ID(), MerchantID: merchantID, RedirectURI: c.Request.RedirectURI,
		Scopes: slices.Clone(c.Scopes), Challenge: c.Request.CodeChallenge, Created: now, Expires: now.Add(CodeLifetime),
	})
	if err != nil {
		return "", err
	}
	return code, nil
}

// TokenRequest is the form of POST /oauth/token.
type TokenRequest struct {
	GrantType    string
	Code         string
	RedirectURI  string
	ClientID     string
	ClientSecret string
	CodeVerifier string
}

// Exchange redeems an authorization code for the installation's two tokens. The code is used
// up by the attempt, whatever its outcome; a code presented a second time revokes the tokens
// it issued. Re-authorising an app the merchant has installed replaces its tokens and scopes.
func (s *Service) Exchange(ctx context.Context, in TokenRequest) (*Installation, Tokens, error) {
	if in.GrantType != "authorization_code" {
		return nil, Tokens{}, oauthErr("unsupported_grant_type", "grant_type must be authorization_code.")
	}
	if in.Code == "" || in.RedirectURI == "" || in.CodeVerifier == "" || in.ClientID == "" {
		return nil, Tokens{}, oauthErr("invalid_request", "code, redirect_uri, code_verifier and client_id are required.")
	}
	a, err := s.store.AppByClientID(ctx, in.ClientID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, Tokens{}, err
	}
	if a == nil || subtle.ConstantTimeCompare(a.s.ClientSecretHash, hashSecret(in.ClientSecret)) != 1 {
		return nil, Tokens{}, &OAuthError{Code: "invalid_client", Description: "Client authentication failed.", Status: http.StatusUnauthorized}
	}
	now := s.clock.Now()
	var tokens Tokens
	inst, err := s.store.RedeemCode(ctx, hashSecret(in.Code), now, func(c CodeSnapshot, current *Installation) (*Installation, error) {
		switch {
		case c.AppID != a.ID():
			return nil, oauthErr("invalid_grant", "The code was issued to another client.")
		case !now.Before(c.Expires):
			return nil, oauthErr("invalid_grant", "The code has expired.")
		case c.RedirectURI != in.RedirectURI:
			return nil, oauthErr("invalid_grant", "redirect_uri differs from the authorization request's.")
		case !validVerifierShape(in.CodeVerifier) || subtle.ConstantTimeCompare([]byte(challengeOf(in.CodeVerifier)), []byte(c.Challenge)) != 1:
			return nil, oauthErr("invalid_grant", "code_verifier does not match the code_challenge.")
		}
		if current != nil {
			tokens = current.replaceTokens(c.Scopes)
			return current, nil
		}
		i, t, err := NewInstallation(a, c.MerchantID, c.Scopes, now)
		tokens = t
		return i, err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, Tokens{}, oauthErr("invalid_grant", "Unknown authorization code.")
	case errors.Is(err, ErrCodeUsed):
		return nil, Tokens{}, oauthErr("invalid_grant", "The code was used before; the tokens it issued are revoked.")
	case errors.Is(err, ErrUnknownMerchant):
		return nil, Tokens{}, oauthErr("invalid_grant", "The merchant no longer exists.")
	case err != nil:
		return nil, Tokens{}, err
	}
	return inst, tokens, nil
}

// validVerifierShape: 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636).
func validVerifierShape(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

func challengeOf(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// replaceTokens gives the installation new tokens and scopes (a re-authorisation).
func (i *Installation) replaceTokens(scopes []string) Tokens {
	t := Tokens{Live: PrefixLiveToken + core.NewSecretPart(), Test: PrefixTestToken + core.NewSecretPart()}
	i.s.Scopes = slices.Clone(scopes)
	i.s.LiveTokenHash, i.s.TestTokenHash = hashSecret(t.Live), hashSecret(t.Test)
	return t
}
