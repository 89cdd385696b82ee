package kit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// MaxBodyBytes is the largest request body accepted (1 MiB).
const MaxBodyBytes = 1 << 20

// Authenticator turns the Authorization header into the caller it stands for.
type Authenticator func(ctx context.Context, authorization string) (core.Caller, error)

// GateConfig configures the contract gate of one API (merchant or operator).
type GateConfig struct {
	Spec *openapi3.T
	// Authenticate is used for operations that declare security; nil means such operations
	// are checked by CheckToken instead (the operator API, which has no caller scope).
	Authenticate Authenticator
	CheckToken   func(authorization string) bool
	// Authorize, when set, replaces Authenticate and CheckToken for secured operations: it
	// sees the whole request (the dashboard's session cookie and CSRF header) and the path
	// parameters, and returns the request context the operation runs with.
	Authorize   func(r *http.Request, pathParams map[string]string) (context.Context, error)
	Limiter     ports.RateLimiter      // nil: no rate limit
	Idempotency ports.IdempotencyStore // nil: no idempotency
	// UnitOfWork is required with Idempotency: in the one-transaction shape the change and
	// its record commit together.
	UnitOfWork ports.UnitOfWorkOf[ports.IdempotencyTx]
	// Transactions bounds the keyed requests of the one-transaction shape that hold their
	// transaction at once (0: no bound). Each holds one connection for its transaction and
	// may need one more, at times, for a read of a store (stores run on the pool): set it
	// below the pool's size so those reads always find a connection.
	Transactions int
	Wall         core.Clock    // required with Idempotency: keys are dated and expire on the wall clock
	Retention    time.Duration // idempotency retention, default 24 h
}

// Gate enforces the contract in front of the generated strict server: unknown routes and
// methods, authentication, rate limits, body limits, idempotency and request validation, in
// that order, each failing with the documented envelope.
type Gate struct {
	cfg       GateConfig
	admit     chan struct{} // one per keyed transaction held (GateConfig.Transactions); nil: no bound
	router    routers.Router
	templates []pathTemplate
	next      http.Handler
}

// NewGate builds the gate for spec in front of next.
func NewGate(cfg GateConfig, next http.Handler) (*Gate, error) {
	// Match on paths only: the servers listed in the spec are examples, not the host we run on.
	doc := *cfg.Spec
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := legacy.NewRouter(&doc)
	if err != nil {
		return nil, err
	}
	if cfg.Idempotency != nil && (cfg.UnitOfWork == nil || cfg.Wall == nil) {
		return nil, errors.New("gate: idempotency needs a unit of work and the wall clock")
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if _, err := idempotencyShapeOf(op); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Retention == 0 {
		cfg.Retention = 24 * time.Hour
	}
	g := &Gate{cfg: cfg, router: router, templates: templatesOf(&doc), next: next}
	if cfg.Transactions > 0 {
		g.admit = make(chan struct{}, cfg.Transactions)
	}
	return g, nil
}

// CallerFrom returns the authenticated caller of the request.
func CallerFrom(ctx context.Context) core.Caller {
	c, _ := ctx.Value(keyCaller).(core.Caller)
	return c
}

func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// API answers may carry secrets or personal data: never stored by a cache.
	w.Header().Set("Cache-Control", "no-store")
	if !g.checkMethod(w, r) {
		return
	}
	route, pathParams, err := g.router.FindRoute(r)
	if err != nil {
		if err.Error() == routers.ErrMethodNotAllowed.Error() {
			WriteError(w, r, core.Invalid(codeMethodNotAllowed, "", "Method %s is not allowed on %s.", r.Method, r.URL.Path))
			return
		}
		WriteError(w, r, core.Invalid(codeResourceMissing, "", "Unrecognized request URL (%s %s).", r.Method, r.URL.Path))
		return
	}
	li := infoOf(r.Context())
	li.route = route.Path

	if secured(route) {
		if g.cfg.Authorize != nil {
			ctx, err := g.cfg.Authorize(r, pathParams)
			if err != nil {
				WriteError(w, r, err)
				return
			}
			r = r.WithContext(ctx)
		} else if g.cfg.Authenticate != nil {
			caller, err := g.cfg.Authenticate(r.Context(), r.Header.Get("Authorization"))
			if err != nil {
				WriteError(w, r, err)
				return
			}
			li.merchant, li.env = caller.Scope.MerchantID, caller.Scope.Env
			ctx := context.WithValue(r.Context(), keyCaller, caller)
			if caller.Scope.Env == core.EnvTest {
				ctx = core.WithClockReading(ctx, caller.Scope, caller.TestClock)
			}
			r = r.WithContext(ctx)
			if g.cfg.Limiter != nil {
				if ok, wait := g.cfg.Limiter.Allow(caller.Scope); !ok {
					secs := int((wait + time.Second - 1) / time.Second)
					if secs < 1 {
						secs = 1
					}
					w.Header().Set("Retry-After", strconv.Itoa(secs))
					WriteError(w, r, core.NewError(core.TypeRateLimit, codeRateLimited, "",
						"Too many requests. Retry after "+strconv.Itoa(secs)+" second(s)."))
					return
				}
			}
		} else if g.cfg.CheckToken == nil || !g.cfg.CheckToken(r.Header.Get("Authorization")) {
			WriteError(w, r, core.NewError(core.TypeAuthentication, "invalid_operator_token", "",
				"Invalid operator token. Send Authorization: Bearer <KASSA_OPERATOR_TOKEN>."))
			return
		}
	}

	body, err := readBody(r, route)
	if err == nil {
		body, err = normalizeNumbers(body)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}

	serve := func(w http.ResponseWriter, r *http.Request) {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := validate(r, route, pathParams, body); err != nil {
			WriteError(w, r, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		g.next.ServeHTTP(w, r)
	}
	if g.cfg.Idempotency != nil && r.Method == http.MethodPost && secured(route) {
		if key, present := r.Header["Idempotency-Key"]; present {
			// The record is keyed by the path, which the store cannot hold with a NUL or
			// invalid UTF-8 in it: refuse such text first, as validation would.
			if err := checkText(r, pathParams, nil); err != nil {
				WriteError(w, r, err)
				return
			}
			shape, _ := idempotencyShapeOf(route.Operation)
			g.idempotent(w, r, key, body, shape, serve)
			return
		}
	}
	serve(w, r)
}

// secured reports whether the operation declares a security requirement.
func secured(route *routers.Route) bool {
	if route.Operation.Security != nil {
		return len(*route.Operation.Security) > 0
	}
	return len(route.Spec.Security) > 0
}

// readBody reads at most MaxBodyBytes, requires JSON when a body is present, and treats an
// empty body of an operation that takes one as {} (every field optional or reported missing).
func readBody(r *http.Request, route *routers.Route) ([]byte, error) {
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodDelete || r.Method == http.MethodHead {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, core.Invalid(codeBodyInvalidJSON, "", "The request body could not be read.")
	}
	if len(body) > MaxBodyBytes {
		return nil, core.Invalid(codeBodyTooLarge, "", "The request body is larger than 1 MiB.")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if route.Operation.RequestBody != nil {
			// The validator and the generated decoder read this {} as JSON, whatever (or
			// whether) a Content-Type was sent with the empty body.
			r.Header.Set("Content-Type", "application/json")
			return []byte("{}"), nil
		}
		return nil, nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, perr := mime.ParseMediaType(ct)
	if perr != nil || mt != "application/json" {
		return nil, core.Invalid(codeContentTypeInvalid, "", "Content-Type must be application/json.")
	}
	// Exactly one JSON value: the validator and the handlers decode only the first one, so
	// trailing data (`{"a":1}{"b":2}`) would otherwise pass unnoticed.
	if !json.Valid(body) {
		return nil, core.Invalid(codeBodyInvalidJSON, "", "The request body is not valid JSON.")
	}
	if !utf8.Valid(body) {
		return nil, core.Invalid(codeBodyInvalidJSON, "", "The request body is not valid UTF-8 JSON.")
	}
	return body, nil
}

// validate checks the request against the contract and maps the first failure to the
// documented envelope (see validation_errors.go).
func validate(r *http.Request, route *routers.Route, pathParams map[string]string, body []byte) error {
	in := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: pathParams,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			ExcludeRequestBody: false,
		},
	}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		return withAmountUnit(mapValidationError(err), body)
	}
	return checkText(r, pathParams, body)
}

// checkText refuses text no resource can hold: a NUL character or invalid UTF-8 in a path
// parameter or a query value, or a NUL in a string (key or value) of the JSON body (readBody
// already refused a body that is not UTF-8). The database cannot
// store either, so letting them through would surface as a 500 instead of a 400 naming the
// field.
func checkText(r *http.Request, pathParams map[string]string, body []byte) error {
	for name, v := range pathParams {
		// The router hands path parameters over as they appear in the escaped path.
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		if !cleanText(v) {
			return core.InvalidField(name, "Invalid %s: it contains a NUL character or invalid UTF-8.", name)
		}
	}
	for name, vs := range r.URL.Query() {
		for _, v := range vs {
			if !cleanText(name) || !cleanText(v) {
				if !cleanText(name) {
					name = ""
				}
				return core.InvalidField(name, "Invalid query parameter: it contains a NUL character or invalid UTF-8.")
			}
		}
	}
	// A NUL can only arrive escaped: raw control characters are not valid JSON.
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return core.Invalid(codeBodyInvalidJSON, "", "The request body is not valid JSON.")
	}
	if param, bad := nulString(v, ""); bad {
		return core.InvalidField(param, "Invalid %s: it contains a NUL character.", orBody(param))
	}
	return nil
}

func orBody(param string) string {
	if param == "" {
		return "request body"
	}
	return param
}

func cleanText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// nulString finds the first string (in key order) of a decoded JSON value that holds a NUL
// and returns its dotted path; for a bad key, the path of the object holding it.
func nulString(v any, path string) (string, bool) {
	join := func(seg string) string {
		if path == "" {
			return seg
		}
		return path + "." + seg
	}
	bad := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	switch x := v.(type) {
	case string:
		return path, bad(x)
	case []any:
		for i, e := range x {
			if p, b := nulString(e, join(strconv.Itoa(i))); b {
				return p, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if bad(k) {
				return path, true
			}
			if p, b := nulString(x[k], join(k)); b {
				return p, true
			}
		}
	}
	return "", false
}
