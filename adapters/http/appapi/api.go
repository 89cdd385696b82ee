package appapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payouts"
	"github.com/kassa-pay/kassa/openapi"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
	"github.com/kassa-pay/kassa/ports"
)

// Reader is the App API's read side over the existing modules' data (adapters/postgres.AppReader).
type Reader interface {
	Payments(ctx context.Context, scope core.Scope, limit int, offset int64, status payments.Status) ([]*payments.Payment, bool, error)
	// Payment answers payments.ErrNotFound for an id that is not the scope's.
	Payment(ctx context.Context, scope core.Scope, id string) (*payments.Payment, error)
	Products(ctx context.Context, scope core.Scope, limit int, offset int64) ([]*catalog.Product, bool, error)
	// Product answers catalog.ErrNotFound for an id that is not the scope's.
	Product(ctx context.Context, scope core.Scope, id string) (*catalog.Product, error)
	Refunds(ctx context.Context, scope core.Scope, limit int, offset int64) ([]*payments.Refund, bool, error)
	// Invoices lists issued invoices (not drafts).
	Invoices(ctx context.Context, scope core.Scope, limit int, offset int64) ([]*invoicing.Invoice, bool, error)
	// Invoice answers invoicing.ErrNotFound for a draft or an id that is not the scope's.
	Invoice(ctx context.Context, scope core.Scope, id string) (*invoicing.Invoice, error)
	Disputes(ctx context.Context, scope core.Scope, limit int, offset int64) ([]*payments.Dispute, bool, error)
	// Subscriptions lists subscriptions in every status.
	Subscriptions(ctx context.Context, scope core.Scope, limit int, offset int64) ([]*billing.Subscription, bool, error)
	// Balances reads the scope's balance per currency (available and pending), by currency.
	Balances(ctx context.Context, scope core.Scope) ([]ledger.Balance, error)
	Payouts(ctx context.Context, scope core.Scope, limit int, offset int64) ([]*payouts.Payout, bool, error)
	apps.VolumeReader
}

// Deps is what the App API needs.
type Deps struct {
	Apps     *apps.Service
	Identity *identity.Service // the merchant profile
	Reader   Reader
	// Clocks gives the scope's now: the sandbox test clock's for a test token (the analytics
	// window ends there).
	Clocks ports.Clocks
	// Live and Test limit the requests of one installation in one environment (keyed by the
	// installation); nil: no limit.
	Live, Test kit.KeyedLimiter
	// BaseURL is the App API's public base URL (KASSA_APP_URL), named in the served spec.
	BaseURL string
}

// route is one App API path: its pattern segments and the scope it needs ("" for none).
type route struct {
	segs  []string
	scope string
}

var routes = []route{
	{[]string{"v1", "openapi.json"}, ""},
	{[]string{"v1", "merchant"}, apps.ScopeMerchantRead},
	{[]string{"v1", "payments"}, apps.ScopePaymentsRead},
	{[]string{"v1", "payments", "{id}"}, apps.ScopePaymentsRead},
	{[]string{"v1", "refunds"}, apps.ScopeRefundsRead},
	{[]string{"v1", "products"}, apps.ScopeProductsRead},
	{[]string{"v1", "products", "{id}"}, apps.ScopeProductsRead},
	{[]string{"v1", "invoices"}, apps.ScopeInvoicesRead},
	{[]string{"v1", "invoices", "{id}"}, apps.ScopeInvoicesRead},
	{[]string{"v1", "disputes"}, apps.ScopeDisputesRead},
	{[]string{"v1", "subscriptions"}, apps.ScopeSubscriptionsRead},
	{[]string{"v1", "analytics", "summary"}, apps.ScopeAnalyticsRead},
	{[]string{"v1", "balance"}, apps.ScopePayoutsRead},
	{[]string{"v1", "payouts"}, apps.ScopePayoutsRead},
}

func match(path string) (route, bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, r := range routes {
		if len(r.segs) != len(segs) {
			continue
		}
		ok := true
		for i, s := range r.segs {
			if segs[i] == "" || (s != "{id}" && s != segs[i]) {
				ok = false
				break
			}
		}
		if ok {
			return r, true
		}
	}
	return route{}, false
}

// API is the App API's front and its generated strict server.
type API struct {
	d    Deps
	next http.Handler
}

// New assembles the App API. It serves paths relative to the app base URL (/v1/…): mount it
// with the base path stripped, inside kit.Outer.
func New(d Deps) (*API, error) {
	if d.Apps == nil || d.Identity == nil || d.Reader == nil || d.Clocks == nil {
		return nil, errors.New("appapi: the apps and identity services, the reader and the clocks are required")
	}
	served, err := openapi.Served(openapi.AppJSON, d.BaseURL)
	if err != nil {
		return nil, err
	}
	strict := appapi.NewStrictHandlerWithOptions(&server{d: d, spec: served}, nil, appapi.StrictHTTPServerOptions{
		// The App API's operations take no body; a request the strict server cannot read is
		// the client's to fix.
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, _ error) {
			writeError(w, r, invalid("The request could not be read."))
		},
		ResponseErrorHandlerFunc: writeError,
	})
	mux := appapi.HandlerWithOptions(strict, appapi.StdHTTPServerOptions{
		BaseRouter: http.NewServeMux(),
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, r, invalid("A query parameter is malformed: %s", paramName(err)))
		},
	})
	return &API{d: d, next: mux}, nil
}

// paramName keeps the name of the parameter the generated binder could not read, never the
// value (which the request carries back to no one).
func paramName(err error) string {
	var ip *appapi.InvalidParamFormatError
	if errors.As(err, &ip) {
		return ip.ParamName + " must be an integer."
	}
	return "check the query parameters."
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Answers carry the merchant's data: never stored by a cache.
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path == "/oauth/token" {
		a.token(w, r)
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, r, errMethod.Msg("The App API is read-only: %s is not allowed.", r.Method))
		return
	}
	rt, ok := match(r.URL.Path)
	if !ok {
		writeError(w, r, errPath.Msg("No App API endpoint at GET %s.", r.URL.Path))
		return
	}
	if rt.scope == "" {
		a.next.ServeHTTP(w, r)
		return
	}
	caller, err := a.d.Apps.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	ctx := kit.WithCaller(r.Context(), core.Caller{Scope: caller.Scope})
	kit.LogInstallation(ctx, caller.Installation.ID())
	ctx = context.WithValue(ctx, callerKey{}, caller)
	r = r.WithContext(ctx)
	if l := a.limiter(caller.Scope.Env); l != nil {
		if ok, wait := l.Allow(caller.Installation.ID()); !ok {
			WriteRateLimited(w, r, wait, "Too many requests for this installation")
			return
		}
	}
	if err := caller.Require(rt.scope); err != nil {
		writeError(w, r, err)
		return
	}
	a.next.ServeHTTP(w, r)
}

func (a *API) limiter(env core.Environment) kit.KeyedLimiter {
	if env == core.EnvLive {
		return a.d.Live
	}
	return a.d.Test
}

type callerKey struct{}

func callerOf(ctx context.Context) apps.Caller {
	c, _ := ctx.Value(callerKey{}).(apps.Caller)
	return c
}

// WriteRateLimited writes 429 rate_limit_error in the App envelope with Retry-After (whole
// seconds, at least one); what says what was limited. The abuse throttle of failed tokens
// answers with it too.
func WriteRateLimited(w http.ResponseWriter, r *http.Request, wait time.Duration, what string) {
	secs := max(int((wait+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, r, core.NewError(core.TypeRateLimit, "rate_limited", "", what+". Retry after "+strconv.Itoa(secs)+" second(s)."))
}
