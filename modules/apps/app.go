package apps

import (
	"crypto/sha256"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// PrefixApp is the id prefix of an app; its OAuth client id has PrefixClient.
const (
	PrefixApp          = "app_"
	PrefixClient       = "ca_"
	PrefixClientSecret = "cs_app_"
)

// AppInput is what the operator registers.
type AppInput struct {
	Name         string
	RedirectURIs []string
	Scopes       []string
	Reviewed     bool
}

// AppSnapshot is an app's stored state.
type AppSnapshot struct {
	ID               string
	Name             string
	ClientID         string
	ClientSecretHash []byte
	RedirectURIs     []string
	Scopes           []string
	Reviewed         bool
	Created          time.Time
}

// App is a registered app: the scopes it may ask for and where its OAuth redirects may go.
type App struct{ s AppSnapshot }

// NewApp checks in and returns the new app with its client secret (shown once; only its
// SHA-256 hash is kept).
func NewApp(in AppInput, now time.Time) (*App, string, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		return nil, "", ErrNameInvalid
	}
	if len(in.RedirectURIs) == 0 || len(in.RedirectURIs) > 10 {
		return nil, "", ErrRedirectURIsMissing
	}
	for i, u := range in.RedirectURIs {
		if !validRedirectURI(u) {
			return nil, "", ErrRedirectURIInvalid.At("redirect_uris." + strconv.Itoa(i))
		}
	}
	scopes, err := checkScopes("scopes", in.Scopes, in.Reviewed)
	if err != nil {
		return nil, "", err
	}
	secret := PrefixClientSecret + core.NewSecretPart()
	return &App{s: AppSnapshot{
		ID: core.NewID(PrefixApp), Name: name, ClientID: core.NewID(PrefixClient),
		ClientSecretHash: hashSecret(secret), RedirectURIs: slices.Clone(in.RedirectURIs),
		Scopes: scopes, Reviewed: in.Reviewed, Created: now,
	}}, secret, nil
}

// RehydrateApp rebuilds a stored app.
func RehydrateApp(s AppSnapshot) *App { return &App{s: s} }

// Snapshot returns a copy of the app's state.
func (a *App) Snapshot() AppSnapshot {
	s := a.s
	s.ClientSecretHash = slices.Clone(s.ClientSecretHash)
	s.RedirectURIs = slices.Clone(s.RedirectURIs)
	s.Scopes = slices.Clone(s.Scopes)
	return s
}

func (a *App) ID() string             { return a.s.ID }
func (a *App) Name() string           { return a.s.Name }
func (a *App) ClientID() string       { return a.s.ClientID }
func (a *App) RedirectURIs() []string { return slices.Clone(a.s.RedirectURIs) }
func (a *App) Scopes() []string       { return slices.Clone(a.s.Scopes) }
func (a *App) Reviewed() bool         { return a.s.Reviewed }
func (a *App) Created() time.Time     { return a.s.Created }

// grant checks the scopes an installation asks for: known, each registered by the app, and a
// restricted one only when the app is reviewed. An empty list grants what the app registered.
func (a *App) grant(param string, scopes []string) ([]string, error) {
	if len(scopes) == 0 {
		scopes = a.Scopes()
	}
	out, err := checkScopes(param, scopes, a.s.Reviewed)
	if err != nil {
		return nil, err
	}
	for _, s := range out {
		if !slices.Contains(a.s.Scopes, s) {
			return nil, ErrScopeNotRegistered.At(param).Msg("The app did not register scope %q.", s)
		}
	}
	return out, nil
}

func validRedirectURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil || len(s) > 2000 {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
