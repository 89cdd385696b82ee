package core

import (
	"fmt"
	"strings"
)

// ErrorType is the documented `error.type` of the merchant API envelope (interface 7).
type ErrorType string

const (
	TypeInvalidRequest      ErrorType = "invalid_request"
	TypeAmountTooSmall      ErrorType = "amount_too_small"
	TypeAmountTooLarge      ErrorType = "amount_too_large"
	TypeCurrencyUnsupported ErrorType = "currency_unsupported"
	TypeAuthentication      ErrorType = "authentication_error"
	TypeCard                ErrorType = "card_error"
	TypePermission          ErrorType = "permission_error"
	TypeNotFound            ErrorType = "not_found"
	TypeIdempotency         ErrorType = "idempotency_error"
	TypeResourceConflict    ErrorType = "resource_conflict"
	TypeInvalidState        ErrorType = "invalid_state"
	TypeRateLimit           ErrorType = "rate_limit_error"
	TypeAPI                 ErrorType = "api_error"
)

// Error is a domain error with identity: its Type and Code are the documented ones, Param
// names the offending field as a dotted path (D3). Two errors match with errors.Is when
// their type and code agree, whatever the param or message.
type Error struct {
	Type    ErrorType
	Code    string
	Param   string
	Message string
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s/%s (%s): %s", e.Type, e.Code, e.Param, e.Message)
	}
	return fmt.Sprintf("%s/%s: %s", e.Type, e.Code, e.Message)
}

// Is matches on type and code so sentinel values work with errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Type == e.Type && t.Code == e.Code
}

// At returns a copy of e that names param.
func (e *Error) At(param string) *Error {
	c := *e
	c.Param = param
	return &c
}

// Msg returns a copy of e with a formatted message.
func (e *Error) Msg(format string, args ...any) *Error {
	c := *e
	c.Message = fmt.Sprintf(format, args...)
	return &c
}

// NewError builds an error of the given type and code.
func NewError(t ErrorType, code, param, message string) *Error {
	return &Error{Type: t, Code: code, Param: param, Message: message}
}

// Invalid is a 400 invalid_request with a field-specific code.
func Invalid(code, param, format string, args ...any) *Error {
	return &Error{Type: TypeInvalidRequest, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// NotFound is the 404 for an id that does not exist under this merchant and environment
// (D3): resource is the noun, e.g. "product" gives code product_not_found.
func NotFound(resource, param, id string) *Error {
	return &Error{Type: TypeNotFound, Code: resource + "_not_found", Param: param,
		Message: fmt.Sprintf("No such %s: '%s'.", resource, id)}
}

// Sentinel errors shared by several modules. Modules define their own beside their rules.
var (
	ErrAmountTooSmall      = &Error{Type: TypeAmountTooSmall, Code: "amount_below_minimum", Message: "Amount must be at least 250 minor units."} // CheckAmountIn adds the minimum in the currency's units
	ErrAmountTooLarge      = &Error{Type: TypeAmountTooLarge, Code: "amount_above_maximum", Message: "Amount must be at most 99999999 minor units."}
	ErrCurrencyUnsupported = &Error{Type: TypeCurrencyUnsupported, Code: "currency_unsupported", Message: "Currency is not supported."}
	ErrMerchantNotReady    = &Error{Type: TypeResourceConflict, Code: "merchant_not_ready", Message: "The merchant has not completed onboarding; live requests that move money are refused."}
	ErrTestModeOnly        = &Error{Type: TypePermission, Code: "test_mode_only", Message: "This endpoint is available only with a test key (sk_test_)."}
)

// Generic invalid_request codes used by both the request validator and the modules, so the
// same mistake gets the same code whichever layer sees it first.
const (
	CodeParameterMissing = "parameter_missing"
	CodeParameterUnknown = "parameter_unknown"
)

// FieldCode is the field-specific code of a malformed field (interface 7: "code is
// field-specific"): the last named segment of the dotted param plus "_invalid", e.g.
// "line_items.0.amount" → "amount_invalid", "customer_email" → "customer_email_invalid".
// Below a metadata map the segments are the merchant's keys, not fields: anything there is
// metadata_invalid.
func FieldCode(param string) string {
	if param == "metadata" || strings.HasPrefix(param, "metadata.") || strings.Contains(param, ".metadata") {
		return CodeMetadataInvalid
	}
	leaf := param
	for {
		i := lastDot(leaf)
		seg := leaf[i+1:]
		if !isDigits(seg) || i < 0 {
			leaf = seg
			break
		}
		leaf = leaf[:i]
	}
	if leaf == "" {
		return "parameter_invalid"
	}
	return leaf + "_invalid"
}

// InvalidField is a 400 invalid_request for a malformed field, with its field-specific code.
func InvalidField(param, format string, args ...any) *Error {
	return Invalid(FieldCode(param), param, format, args...)
}

// MissingField is a 400 invalid_request/parameter_missing.
func MissingField(param string) *Error {
	return Invalid(CodeParameterMissing, param, "Missing required parameter: %s.", param)
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
