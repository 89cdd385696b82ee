package dashboardapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payouts"
	"github.com/kassa-pay/kassa/modules/testclock"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/openapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	"github.com/kassa-pay/kassa/ports"
)

// DashboardDeps is what the dashboard JSON API needs. Every handler calls a module use case;
// the dashboard has no business rules of its own.
type DashboardDeps struct {
	Identity  *identity.Service
	Dashboard *identity.Dashboard
	Catalog   *catalog.Service
	Checkout  *checkout.Service
	Invoices  *invoicing.Service
	// Billing, BillingQueries and CustomerHistory serve the customer and subscription pages
	// and the recurring figures (nil: those answer 500).
	Billing         *billing.Service
	BillingQueries  *billing.Queries
	CustomerHistory CustomerHistory
	// MRRHistory serves the overview's MRR chart (nil: it answers 500).
	MRRHistory *billing.MRRHistory
	Events     *events.Service
	Payments   *payments.Queries
	Refunds    *payments.Refunder // nil: refunds answer 500
	Disputes   *payments.Disputes // nil: disputes answer 500 (and payments show none)
	Webhooks   *webhooks.Service  // nil: the overview counts no endpoints
	Apps       *apps.Service
	AppHooks   *webhooks.AppService // nil: the Apps page shows no deliveries
	Mailbox    ports.Mailbox        // nil: the test mailbox answers an empty list
	// Settings are the merchant's invoicing settings (the invoice number prefix).
	Settings *invoicing.SettingsService
	Ledger   *ledger.Service // nil: the balance answers 500 and payments show no ledger entries
	Payouts  PayoutSchedule  // nil: the balance says payouts are not set up
	// PayoutReads lists and reads payouts; nil: the payouts pages answer 500.
	PayoutReads *payouts.Service
	// Clocks is the test clock the header of test mode shows; Declines lists the declined
	// charges (they create no payment).
	Clocks   *testclock.Service
	Declines ports.DeclinedCharges
	// ClientIP finds the client address the throttles count per (trusted proxies; an IPv6
	// address by its /64).
	ClientIP kit.ClientIP
	// SecureCookie marks the session cookie Secure (the dashboard URL is https).
	SecureCookie bool
	// AuthThrottle bounds failed authentication per address; Limits (NewDashboardLimits) are
	// the request rates. Nil: none.
	AuthThrottle *kit.AuthThrottle
	Limits       *kit.RequestLimits
	// Idempotency, with UnitOfWork and Wall, makes every POST idempotent under an
	// Idempotency-Key (the merchant API's gate: a refund, which calls the processor, in
	// phases; the rest in one transaction); nil: keys are not honoured.
	Idempotency ports.IdempotencyStore
	UnitOfWork  ports.UnitOfWorkOf[ports.IdempotencyTx]
	Wall        core.Clock
	// Transactions bounds the keyed requests holding their transaction (GateConfig).
	Transactions int
	// BaseURL is the dashboard's public base URL (KASSA_DASHBOARD_URL), named in the served
	// spec's servers.
	BaseURL string
}

// dashboardAPI implements the generated strict server of the dashboard API
// (openapi/dashboard.yaml). Handlers find the session's merchant, acting in the path's
// environment, with kit.CallerFrom(ctx), as merchant API handlers do.
type dashboardAPI struct {
	d    DashboardDeps
	spec []byte // the served document (openapi.Served)
}

var _ dash.StrictServerInterface = (*dashboardAPI)(nil)

// SessionCookie is the name of the dashboard session cookie.
const SessionCookie = "kassa_session"

// Context keys of the dashboard.
type dashKey int

const (
	keyDashSession dashKey = iota
	keyClientIP
)

// DashboardSessionFrom returns the signed-in session of a dashboard request (nil before the
// gate has authorised it, or for sign-in).
func DashboardSessionFrom(ctx context.Context) *identity.DashboardSession {
	s, _ := ctx.Value(keyDashSession).(*identity.DashboardSession)
	return s
}

// NewDashboardAPI assembles the dashboard JSON API (everything under /api/ on the dashboard
// origin): the contract gate with session-cookie and CSRF authorisation in front of the
// generated strict server. Mount it under /api/ inside Outer.
func NewDashboardAPI(d DashboardDeps) (http.Handler, error) {
	spec, err := openapi.LoadDashboard()
	if err != nil {
		return nil, fmt.Errorf("dashboard spec: %w", err)
	}
	served, err := openapi.Served(openapi.DashboardJSON, d.BaseURL)
	if err != nil {
		return nil, err
	}
	h := dash.NewStrictHandlerWithOptions(&dashboardAPI{d: d, spec: served}, nil, dash.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, _ error) {
			kit.WriteError(w, r, kit.ErrBodyInvalidJSON())
		},
		ResponseErrorHandlerFunc: writeDashboardError,
	})
	mux := dash.HandlerWithOptions(h, dash.StdHTTPServerOptions{BaseRouter: http.NewServeMux(), ErrorHandlerFunc: kit.ParamError})
	gate, err := kit.NewGate(kit.GateConfig{Spec: spec, Authorize: dashboardAuthorizer(d.Dashboard),
		Idempotency: d.Idempotency, UnitOfWork: d.UnitOfWork, Wall: d.Wall, Transactions: d.Transactions}, mux)
	if err != nil {
		return nil, err
	}
	limited := d.AuthThrottle.Wrap(d.Limits.Wrap(gate))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// API answers are private to the signed-in user and never cached.
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		limited.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyClientIP, d.ClientIP.Key(r))))
	}), nil
}

// dashboardAuthorizer checks the session cookie of every secured operation and, for unsafe
// methods, the X-CSRF-Token header; it puts the session and the caller (the session's merchant
// in the path's environment) into the context.
func dashboardAuthorizer(sessions *identity.Dashboard) func(*http.Request, map[string]string) (context.Context, error) {
	return func(r *http.Request, params map[string]string) (context.Context, error) {
		token := ""
		if c, err := r.Cookie(SessionCookie); err == nil {
			token = c.Value
		}
		s, err := sessions.Session(r.Context(), token)
		if err != nil {
			return nil, err
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if !s.CSRFValid(r.Header.Get("X-CSRF-Token")) {
				return nil, identity.ErrCSRFInvalid
			}
		}
		env := core.Environment(params["env"])
		if !env.Valid() {
			env = "" // the request validator reports the bad value next
		}
		ctx := context.WithValue(r.Context(), keyDashSession, s)
		return kit.WithCaller(ctx, s.Caller(env)), nil
	}
}

// writeDashboardError is WriteError plus the Retry-After header of a throttled sign-in.
func writeDashboardError(w http.ResponseWriter, r *http.Request, err error) {
	var te *identity.ThrottledError
	if errors.As(err, &te) {
		w.Header().Set("Retry-After", strconv.Itoa(int(te.RetryAfter.Seconds())))
	}
	kit.WriteError(w, r, err)
}

// sessionCookie is the Set-Cookie value that starts (token != "") or clears the session.
func (a *dashboardAPI) sessionCookie(token string) string {
	c := &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true, //nolint:gosec // G124: Secure follows the listener (off only on plain-HTTP development origins)
		SameSite: http.SameSiteStrictMode, Secure: a.d.SecureCookie, MaxAge: int(identity.SessionMaxAge.Seconds())}
	if token == "" {
		c.MaxAge = -1 // Max-Age=0: delete now
	}
	return c.String()
}

func presentDashSession(s *identity.DashboardSession) dash.Session {
	return dash.Session{
		User:      dash.SessionUser{Id: s.UserID, Email: s.UserEmail},
		Merchant:  dash.SessionMerchant{Id: s.MerchantID, Name: s.MerchantName, Onboarded: s.MerchantOnboarded},
		CsrfToken: s.CSRFToken,
		ExpiresAt: s.ExpiresAt.Unix(),
	}
}

func (a *dashboardAPI) SignIn(ctx context.Context, r dash.SignInRequestObject) (dash.SignInResponseObject, error) {
	ip, _ := ctx.Value(keyClientIP).(string)
	res, err := a.d.Dashboard.SignIn(ctx, r.Body.Email, r.Body.Password, ip)
	if err != nil {
		return nil, err
	}
	cookie := a.sessionCookie(res.Token)
	return dash.SignIn200JSONResponse{Body: presentDashSession(res.Session), Headers: dash.SignIn200ResponseHeaders{SetCookie: &cookie}}, nil
}

func (a *dashboardAPI) GetSession(ctx context.Context, _ dash.GetSessionRequestObject) (dash.GetSessionResponseObject, error) {
	return dash.GetSession200JSONResponse{Body: presentDashSession(DashboardSessionFrom(ctx))}, nil
}

func (a *dashboardAPI) SignOut(ctx context.Context, _ dash.SignOutRequestObject) (dash.SignOutResponseObject, error) {
	if err := a.d.Dashboard.SignOut(ctx, DashboardSessionFrom(ctx)); err != nil {
		return nil, err
	}
	cookie := a.sessionCookie("")
	return dash.SignOut204Response{Headers: dash.SignOut204ResponseHeaders{SetCookie: &cookie}}, nil
}

// withParam names param on a domain error that names none (a path id looked up by a use case
// that does not know the parameter's name).
func withParam(err error, param string) error {
	var de *core.Error
	if errors.As(err, &de) && de.Param == "" {
		return de.At(param)
	}
	return err
}
