package kit

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
)

// statusByType is the one table from documented error types to HTTP status.
var statusByType = map[core.ErrorType]int{
	core.TypeInvalidRequest:      http.StatusBadRequest,
	core.TypeAmountTooSmall:      http.StatusBadRequest,
	core.TypeAmountTooLarge:      http.StatusBadRequest,
	core.TypeCurrencyUnsupported: http.StatusBadRequest,
	core.TypeAuthentication:      http.StatusUnauthorized,
	core.TypeCard:                http.StatusPaymentRequired,
	core.TypePermission:          http.StatusForbidden,
	core.TypeNotFound:            http.StatusNotFound,
	core.TypeIdempotency:         http.StatusConflict,
	core.TypeResourceConflict:    http.StatusConflict,
	core.TypeInvalidState:        http.StatusUnprocessableEntity,
	core.TypeRateLimit:           http.StatusTooManyRequests,
	core.TypeAPI:                 http.StatusInternalServerError,
}

// statusByCode refines the table for the few codes whose status differs from their type's.
var statusByCode = map[string]int{
	codeResourceMissing:    http.StatusNotFound,
	codeMethodNotAllowed:   http.StatusMethodNotAllowed,
	codeBodyTooLarge:       http.StatusRequestEntityTooLarge,
	codeContentTypeInvalid: http.StatusUnsupportedMediaType,
	codeUnavailable:        http.StatusServiceUnavailable,
	// No processor can charge in the session's environment (the browser API and the pages), or
	// refund in the payment's (payments.ErrRefundProcessorUnavailable has the same code).
	checkout.ErrProcessorUnavailable.Code: http.StatusServiceUnavailable,
}

// Transport-level codes.
const (
	codeResourceMissing    = "resource_missing"
	codeMethodNotAllowed   = "method_not_allowed"
	codeBodyInvalidJSON    = "body_invalid_json"
	codeBodyTooLarge       = "body_too_large"
	codeContentTypeInvalid = "content_type_invalid"
	codeIdempotencyInvalid = "idempotency_key_invalid"
	codeKeyReused          = "idempotency_key_reused"
	codeKeyInUse           = "idempotency_key_in_use"
	codeRateLimited        = "rate_limited"
	codeInternal           = "internal_error"
	codeUnavailable        = "service_unavailable"
)

// StatusOf returns the HTTP status of a domain error.
func StatusOf(e *core.Error) int {
	if s, ok := statusByCode[e.Code]; ok {
		return s
	}
	if s, ok := statusByType[e.Type]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Type        core.ErrorType `json:"type"`
	Code        string         `json:"code"`
	Message     string         `json:"message"`
	Param       *string        `json:"param"`
	RequestID   string         `json:"request_id"`
	DeclineCode *string        `json:"decline_code,omitempty"`
}

type errorEnvelope struct {
	Error errorBody `json:"error"`
}

// internalError is what a client sees of an unexpected failure: transient, no details.
var internalError = &core.Error{Type: core.TypeAPI, Code: codeInternal,
	Message: "An internal error occurred. The request may be retried with the same Idempotency-Key."}

// AsDomainError turns any error into the envelope's error: domain errors as they are, the
// database being unreachable as 503 service_unavailable, anything else as an opaque
// api_error; both of the latter are logged with the request id.
func AsDomainError(r *http.Request, err error) *core.Error {
	var de *core.Error
	if errors.As(err, &de) {
		return de
	}
	if unavailable(err) {
		slog.WarnContext(r.Context(), "service unavailable: the database cannot be reached", "request_id", RequestID(r.Context()), "error", err.Error())
		return serviceUnavailable
	}
	slog.ErrorContext(r.Context(), "internal error", "request_id", RequestID(r.Context()), "error", err.Error())
	return internalError
}

// WriteError writes the documented error envelope for err.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	de := AsDomainError(r, err)
	WriteEnvelope(w, RequestID(r.Context()), de, "")
}

// writeEnvelope writes de with the status of the table; declineCode, when not empty, is the
// decline_code of a refused charge.
func WriteEnvelope(w http.ResponseWriter, requestID string, de *core.Error, declineCode string) {
	body := errorEnvelope{Error: errorBody{Type: de.Type, Code: de.Code, Message: de.Message, RequestID: requestID}}
	if de.Param != "" {
		p := de.Param
		body.Error.Param = &p
	}
	if declineCode != "" {
		body.Error.DeclineCode = &declineCode
	}
	if de.Code == codeUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterUnavailable))
	}
	writeJSON(w, StatusOf(de), body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"type":"api_error","code":"internal_error","message":"An internal error occurred.","param":null,"request_id":""}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
