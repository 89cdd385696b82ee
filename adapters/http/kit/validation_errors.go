package kit

import (
	"errors"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/kassa-pay/kassa/core"
)

// mapValidationError turns a kin-openapi request validation failure into the documented
// envelope. Documented codes win over generic ones: a schema that carries the vendor extension
// `x-kassa-error` names, per failing keyword (or "*" for any), the error type and code the
// interface document gives for it (an amount below 250 is amount_too_small /
// amount_below_minimum), so the validator and the modules answer alike.
func mapValidationError(err error) *core.Error {
	var re *openapi3filter.RequestError
	if !errors.As(err, &re) {
		return core.Invalid("parameter_invalid", "", "The request is invalid.")
	}
	var se *openapi3.SchemaError
	hasSchemaErr := errors.As(re.Err, &se)
	if re.Parameter != nil {
		name := re.Parameter.Name
		if hasSchemaErr {
			return fromSchemaError(se, name)
		}
		if re.Err == nil && strings.Contains(re.Reason, "required") {
			return core.MissingField(name)
		}
		return core.InvalidField(name, "Invalid value for %s.", name)
	}
	if re.RequestBody != nil && hasSchemaErr {
		return fromSchemaError(se, "")
	}
	if re.RequestBody != nil {
		return core.Invalid(codeBodyInvalidJSON, "", "The request body is not valid JSON.")
	}
	return core.Invalid("parameter_invalid", "", "The request is invalid.")
}

func fromSchemaError(se *openapi3.SchemaError, base string) *core.Error {
	path := se.JSONPointer()
	if base != "" {
		path = append([]string{base}, path...)
	}
	param := strings.Join(path, ".")
	switch {
	case se.SchemaField == "required":
		return core.MissingField(param)
	case se.SchemaField == "properties" && strings.Contains(se.Reason, "unsupported"):
		unknown := unknownKey(se)
		if param != "" && unknown != "" {
			unknown = param + "." + unknown
		} else if unknown == "" {
			unknown = param
		}
		return core.Invalid(core.CodeParameterUnknown, unknown, "Received unknown parameter: %s.", unknown)
	}
	if t, code, ok := documented(se.Schema, se.SchemaField); ok {
		return core.NewError(t, code, param, message(param, se.Reason))
	}
	return core.InvalidField(param, "%s", message(param, se.Reason))
}

func message(param, reason string) string {
	reason = plainNumbers(reason)
	if param == "" {
		return "Invalid request: " + reason + "."
	}
	return "Invalid " + param + ": " + reason + "."
}

// unknownKey finds the first (sorted) key of the failing object that its schema does not declare.
func unknownKey(se *openapi3.SchemaError) string {
	obj, ok := se.Value.(map[string]any)
	if !ok || se.Schema == nil {
		return ""
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if _, declared := se.Schema.Properties[k]; !declared {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

// documented reads x-kassa-error: {<keyword>|"*": {type, code}} from the failing schema.
func documented(s *openapi3.Schema, keyword string) (core.ErrorType, string, bool) {
	if s == nil {
		return "", "", false
	}
	raw, ok := s.Extensions["x-kassa-error"].(map[string]any)
	if !ok {
		return "", "", false
	}
	entry, ok := raw[keyword].(map[string]any)
	if !ok {
		entry, ok = raw["*"].(map[string]any)
	}
	if !ok {
		return "", "", false
	}
	t, _ := entry["type"].(string)
	code, _ := entry["code"].(string)
	if t == "" || code == "" {
		return "", "", false
	}
	return core.ErrorType(t), code, true
}
