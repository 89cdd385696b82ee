package appapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
)

// errMethod, errPath and errQuery are the transport errors of the App API.
var (
	errMethod = core.NewError("method_not_allowed", "method_not_allowed", "", "")
	errPath   = core.NewError(core.TypeNotFound, "resource_missing", "", "")
)

// invalid is a 400 invalid_request naming what is wrong.
func invalid(format string, args ...any) *core.Error {
	return core.Invalid("parameter_invalid", "", format, args...)
}

// appError is the App envelope's type and the status of err.
func appError(r *http.Request, err error) (status int, typ appapi.ErrorErrorType, message string) {
	de := kit.AsDomainError(r, err) // logs and hides what is not a domain error
	switch {
	case errors.Is(de, apps.ErrInvalidToken):
		return http.StatusUnauthorized, appapi.ErrorErrorTypeInvalidToken, de.Message
	case errors.Is(de, apps.ErrInsufficientScope):
		return http.StatusForbidden, appapi.ErrorErrorTypeInsufficientScope, de.Message
	case de.Code == errMethod.Code:
		return http.StatusMethodNotAllowed, appapi.ErrorErrorTypeMethodNotAllowed, de.Message
	case de.Type == core.TypeNotFound:
		return http.StatusNotFound, appapi.ErrorErrorTypeNotFound, de.Message
	case de.Type == core.TypeInvalidRequest:
		return http.StatusBadRequest, appapi.ErrorErrorTypeInvalidRequest, de.Message
	case de.Type == core.TypeRateLimit:
		return http.StatusTooManyRequests, appapi.ErrorErrorTypeRateLimitError, de.Message
	case kit.StatusOf(de) == http.StatusServiceUnavailable:
		return http.StatusServiceUnavailable, appapi.ErrorErrorTypeApiError, "The service is temporarily unavailable. Retry later."
	}
	return http.StatusInternalServerError, appapi.ErrorErrorTypeApiError, "An internal error occurred. Retry later."
}

// writeError writes the App envelope {error: {type, message}} for err.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, typ, msg := appError(r, err)
	var body appapi.Error
	body.Error.Type, body.Error.Message = typ, msg
	b, jerr := json.Marshal(body)
	if jerr != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"type":"api_error","message":"An internal error occurred. Retry later."}}`)
	}
	switch status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", http.MethodGet)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(kit.RetryAfterUnavailable))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
