package apps

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"

	"github.com/kassa-pay/kassa/core"
)

// Service holds the app and installation use cases.
type Service struct {
	store Store
	clock core.Clock
}

// NewService wires the use cases to their store and the wall clock (installations and
// uninstalls are dated in real time, in both environments).
func NewService(store Store, clock core.Clock) (*Service, error) {
	if store == nil || clock == nil {
		return nil, errors.New("apps: the store and the clock are required")
	}
	return &Service{store: store, clock: clock}, nil
}

// RegisterApp registers a new app and returns it with its client secret, shown once.
func (s *Service) RegisterApp(ctx context.Context, in AppInput) (*App, string, error) {
	a, secret, err := NewApp(in, s.clock.Now())
	if err != nil {
		return nil, "", err
	}
	if err := s.store.CreateApp(ctx, a); err != nil {
		return nil, "", err
	}
	return a, secret, nil
}

// GetApp returns a registered app.
func (s *Service) GetApp(ctx context.Context, id string) (*App, error) {
	a, err := s.store.GetApp(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrAppNotFound.At("id").Msg("No such app: '%s'.", id)
	}
	return a, err
}

// Install installs app appID on merchantID with scopes (empty: every scope the app
// registered) and returns the installation with its two tokens, shown once.
func (s *Service) Install(ctx context.Context, appID, merchantID string, scopes []string) (*Installation, Tokens, error) {
	a, err := s.GetApp(ctx, appID)
	if err != nil {
		return nil, Tokens{}, err
	}
	i, tokens, err := NewInstallation(a, merchantID, scopes, s.clock.Now())
	if err != nil {
		return nil, Tokens{}, err
	}
	switch err := s.store.CreateInstallation(ctx, i); {
	case errors.Is(err, ErrInstalled):
		return nil, Tokens{}, ErrAlreadyInstalled
	case errors.Is(err, ErrUnknownMerchant):
		return nil, Tokens{}, ErrMerchantNotFound.Msg("No such merchant: '%s'.", merchantID)
	case err != nil:
		return nil, Tokens{}, err
	}
	return i, tokens, nil
}

// GetInstallation returns an installation, revoked or not.
func (s *Service) GetInstallation(ctx context.Context, id string) (*Installation, error) {
	if !IsUUID(id) {
		return nil, ErrInstallationMissing.At("id").Msg("No such installation: '%s'.", id)
	}
	i, err := s.store.GetInstallation(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrInstallationMissing.At("id").Msg("No such installation: '%s'.", id)
	}
	return i, err
}

// Uninstall revokes the installation's tokens at once: the next App API request with either
// answers 401. An installation uninstalled before is not found.
func (s *Service) Uninstall(ctx context.Context, id string) (*Installation, error) {
	i, err := s.GetInstallation(ctx, id)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if err := i.Uninstall(now); err != nil {
		return nil, ErrInstallationMissing.At("id").Msg("No such installation: '%s' (it was uninstalled).", id)
	}
	if err := s.store.RevokeInstallation(ctx, id, now); errors.Is(err, ErrNotFound) {
		return nil, ErrInstallationMissing.At("id").Msg("No such installation: '%s' (it was uninstalled).", id)
	} else if err != nil {
		return nil, err
	}
	return i, nil
}

// InstalledApp is one of a merchant's installations with the name of its app.
type InstalledApp struct {
	Installation *Installation
	AppName      string
}

// MerchantInstallations lists the merchant's installed apps (not uninstalled), newest first.
func (s *Service) MerchantInstallations(ctx context.Context, merchantID string) ([]InstalledApp, error) {
	list, err := s.store.ActiveInstallations(ctx, merchantID)
	if err != nil {
		return nil, err
	}
	out := make([]InstalledApp, 0, len(list))
	for _, i := range list {
		a, err := s.store.GetApp(ctx, i.AppID())
		if err != nil {
			return nil, err
		}
		out = append(out, InstalledApp{Installation: i, AppName: a.Name()})
	}
	return out, nil
}

// UninstallForMerchant is Uninstall on behalf of the merchant: another merchant's
// installation is not found, as an unknown one.
func (s *Service) UninstallForMerchant(ctx context.Context, merchantID, id string) (*Installation, error) {
	i, err := s.GetInstallation(ctx, id)
	if err != nil {
		return nil, err
	}
	if i.MerchantID() != merchantID {
		return nil, ErrInstallationMissing.At("id").Msg("No such installation: '%s'.", id)
	}
	return s.Uninstall(ctx, id)
}

// Caller is an authenticated App API request: the installation and the merchant environment
// its token reads.
type Caller struct {
	Installation *Installation
	Scope        core.Scope
}

// Authenticate turns an Authorization header into the caller it stands for. A missing,
// malformed, unknown or revoked token is ErrInvalidToken.
func (s *Service) Authenticate(ctx context.Context, authorization string) (Caller, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Caller{}, ErrInvalidToken
	}
	token = strings.TrimSpace(token)
	env, ok := tokenEnv(token)
	if !ok {
		return Caller{}, ErrInvalidToken
	}
	hash := hashSecret(token)
	i, err := s.store.InstallationByTokenHash(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return Caller{}, ErrInvalidToken
	}
	if err != nil {
		return Caller{}, err
	}
	want := i.s.TestTokenHash
	if env == core.EnvLive {
		want = i.s.LiveTokenHash
	}
	// The store found the row by the hash; compare again in constant time, against the token
	// of the environment the prefix names (a test token never reads live data).
	if subtle.ConstantTimeCompare(want, hash) != 1 || i.Revoked() {
		return Caller{}, ErrInvalidToken
	}
	// Last used, to the minute: one statement outside any transaction; a failure to record it
	// never fails the request.
	_ = s.store.TouchInstallation(ctx, i.ID(), s.clock.Now())
	return Caller{Installation: i, Scope: core.Scope{MerchantID: i.MerchantID(), Env: env}}, nil
}

// Require answers ErrInsufficientScope naming scope when the caller was not granted it.
func (c Caller) Require(scope string) error {
	if c.Installation == nil || !c.Installation.HasScope(scope) {
		return ErrInsufficientScope.Msg("This endpoint needs the %s scope, which the installation was not granted.", scope)
	}
	return nil
}
