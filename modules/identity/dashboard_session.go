package identity

import (
	"crypto/subtle"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Dashboard session lifetimes (dashboard API): a session ends after SessionIdle without a
// request, and SessionMaxAge after sign-in whatever the activity.
const (
	SessionIdle   = 12 * time.Hour
	SessionMaxAge = 7 * 24 * time.Hour
	// sessionTouchGranularity bounds how often a session's last_seen is written.
	sessionTouchGranularity = time.Minute
)

// SessionRecord is what the store keeps of a new session: never the token, only its SHA-256.
type SessionRecord struct {
	TokenHash  []byte
	UserID     string
	MerchantID string
	CSRFToken  string
	Created    time.Time
	LastSeen   time.Time
	ExpiresAt  time.Time // Created + SessionMaxAge
}

// DashboardSession is a signed-in dashboard session with who it belongs to.
type DashboardSession struct {
	SessionRecord
	UserEmail         string
	MerchantName      string
	MerchantOnboarded bool
}

// Caller is the session's merchant acting in env, as the merchant API's key would.
func (s *DashboardSession) Caller(env core.Environment) core.Caller {
	return core.Caller{Scope: core.Scope{MerchantID: s.MerchantID, Env: env}, Onboarded: s.MerchantOnboarded}
}

// CSRFValid reports, in constant time, whether token is the session's CSRF token.
func (s *DashboardSession) CSRFValid(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRFToken)) == 1
}

// ErrSessionRequired is the 401 of a dashboard request without a valid session.
var ErrSessionRequired = core.NewError(core.TypeAuthentication, "session_required", "",
	"Sign in first: this request needs a valid dashboard session (the kassa_session cookie).")

// ErrCSRFInvalid is the 403 of an unsafe dashboard request without the session's CSRF token.
var ErrCSRFInvalid = core.NewError(core.TypePermission, "csrf_token_invalid", "",
	"The X-CSRF-Token header is missing or does not match this session.")

// Dashboard is the sign-in, session and throttling use cases of the merchant dashboard.
type Dashboard struct {
	store    DashboardStore
	clock    core.Clock
	throttle ThrottlePolicy
}

// NewDashboard wires the dashboard use cases to their store and clock (both required); the
// throttle's unset fields take DefaultThrottle's.
func NewDashboard(store DashboardStore, clock core.Clock, throttle ThrottlePolicy) (*Dashboard, error) {
	if store == nil {
		return nil, errors.New("identity: NewDashboard: the store is required")
	}
	if clock == nil {
		return nil, errors.New("identity: NewDashboard: the clock is required")
	}
	// Make the stand-in hash of unknown e-mails now, so that the first such sign-in does not
	// take longer than a wrong password.
	go dummyHash()
	return &Dashboard{store: store, clock: clock, throttle: throttle.withDefaults()}, nil
}
