package kit

import (
	"context"
	"net/http"

	"github.com/kassa-pay/kassa/core"
)

// NotFound answers a path no API serves: 404 resource_missing.
func NotFound(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, core.Invalid(codeResourceMissing, "", "Unrecognized request URL (%s %s).", r.Method, r.URL.Path))
}

// ParamError answers a parameter the generated router could not bind (the gate's validation
// normally reports it first).
func ParamError(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, core.Invalid("parameter_invalid", "", "A parameter is invalid: %s", err.Error()))
}

// ErrBodyInvalidJSON is the error of a body the generated strict server could not decode.
func ErrBodyInvalidJSON() *core.Error {
	return core.Invalid(codeBodyInvalidJSON, "", "The request body is not valid JSON for this endpoint.")
}

// BodyInvalidJSON is the RequestErrorHandlerFunc of a generated strict server.
func BodyInvalidJSON(w http.ResponseWriter, r *http.Request, _ error) {
	WriteError(w, r, ErrBodyInvalidJSON())
}

// WriteRaw writes a JSON document as it is (the served OpenAPI documents).
func WriteRaw(w http.ResponseWriter, doc []byte) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(doc)
	return err
}

// WithCaller puts the authenticated caller into the context (for an Authorize hook; the gate
// does it itself for Authenticate) and records its merchant and environment in the access log.
func WithCaller(ctx context.Context, c core.Caller) context.Context {
	li := infoOf(ctx)
	li.merchant, li.env = c.Scope.MerchantID, c.Scope.Env
	return context.WithValue(ctx, keyCaller, c)
}
