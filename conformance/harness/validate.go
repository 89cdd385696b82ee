package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// ValidatingTransport checks every response against the OpenAPI documents: the status must be
// declared for the operation, headers and body must match their schemas, every response must
// carry a req_ Request-Id, and responses to unknown routes or methods must be the documented
// Error envelope. A violation fails the request with an error, so the test that made it fails.
type ValidatingTransport struct {
	Base http.RoundTripper
	// Prefix, when set, is the path the documents' paths are relative to on the server (the
	// App API's /app under the API listener): every request must be under it, and it is cut
	// off before the route is looked up.
	Prefix  string
	routers []routers.Router
	errSch  *openapi3.SchemaRef
}

// NewValidatingTransport validates against docs (the first one's Error schema is used for
// responses to routes no document knows).
func NewValidatingTransport(docs ...*openapi3.T) (*ValidatingTransport, error) {
	vt := &ValidatingTransport{Base: http.DefaultTransport}
	for _, d := range docs {
		c := *d
		c.Servers = openapi3.Servers{{URL: "/"}}
		r, err := legacy.NewRouter(&c)
		if err != nil {
			return nil, err
		}
		vt.routers = append(vt.routers, r)
	}
	vt.errSch = docs[0].Components.Schemas["Error"]
	if vt.errSch == nil {
		return nil, fmt.Errorf("spec has no Error schema")
	}
	return vt, nil
}

// Client returns an *http.Client using the transport.
func (vt *ValidatingTransport) Client() *http.Client { return &http.Client{Transport: vt} }

func (vt *ValidatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := vt.Base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := vt.check(req, reqBody, resp, body); err != nil {
		return nil, fmt.Errorf("%s %s → %d violates the contract: %w\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, err, truncate(body))
	}
	return resp, nil
}

func (vt *ValidatingTransport) check(req *http.Request, reqBody []byte, resp *http.Response, body []byte) error {
	if id := resp.Header.Get("Request-Id"); !strings.HasPrefix(id, "req_") {
		return fmt.Errorf("missing or malformed Request-Id header %q", id)
	}
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	// Match on the path only, as the server does (the spec's servers are examples).
	u := *vreq.URL
	u.Scheme, u.Host = "", ""
	if vt.Prefix != "" {
		rest, ok := strings.CutPrefix(u.Path, vt.Prefix)
		if !ok {
			return fmt.Errorf("path %q is not under %q", u.Path, vt.Prefix)
		}
		u.Path, u.RawPath = rest, ""
	}
	vreq.URL = &u
	for _, r := range vt.routers {
		route, params, err := r.FindRoute(vreq)
		if err != nil || !exactPath(route.Path, u.Path) {
			continue
		}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{
				Request: vreq, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
			},
			Status: resp.StatusCode,
			Header: resp.Header,
			Options: &openapi3filter.Options{
				IncludeResponseStatus: true, // an undeclared status is a violation
				MultiError:            true,
			},
		}
		in.SetBodyBytes(body)
		return openapi3filter.ValidateResponse(context.Background(), in)
	}
	// No document knows this route or method: the body must be the Error envelope.
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		return fmt.Errorf("unknown route answered %d, want 404 or 405", resp.StatusCode)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	return vt.errSch.Value.VisitJSON(v)
}

// exactPath reports whether path is an instance of the template itself: the router also takes
// "/v1/products" for "/v1/products/{id}" (an empty id) and "/healthz/" for "/healthz", which
// name no documented operation.
func exactPath(tmpl, path string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, t := range ts {
		if strings.HasPrefix(t, "{") {
			if ps[i] == "" {
				return false
			}
		} else if t != ps[i] {
			return false
		}
	}
	return true
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}
