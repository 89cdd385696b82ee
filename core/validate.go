package core

import (
	"net/mail"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Limits shared by every resource that carries them (D13, interface 8).
const (
	MaxMetadataKeys     = 50
	MaxMetadataKeyLen   = 40
	MaxMetadataValueLen = 500
	MaxURLLen           = 2048
	MaxEmailLen         = 254
)

// CodeMetadataInvalid is the code of every metadata violation, whichever key is at fault.
const CodeMetadataInvalid = "metadata_invalid"

// CheckMetadata enforces the metadata limits: at most 50 keys, keys 1–40 characters, values at
// most 500. param names the metadata field (e.g. "metadata" or "price.metadata"); a bad key or
// value is reported at param.<key>.
func CheckMetadata(md map[string]string, param string) error {
	if len(md) > MaxMetadataKeys {
		return Invalid(CodeMetadataInvalid, param, "Metadata may hold at most %d keys.", MaxMetadataKeys)
	}
	for k, v := range md {
		if n := utf8.RuneCountInString(k); n < 1 || n > MaxMetadataKeyLen {
			return Invalid(CodeMetadataInvalid, param, "Metadata keys must be 1 to %d characters.", MaxMetadataKeyLen)
		}
		if utf8.RuneCountInString(v) > MaxMetadataValueLen {
			return Invalid(CodeMetadataInvalid, param+"."+k, "Metadata values must be at most %d characters.", MaxMetadataValueLen)
		}
	}
	return nil
}

// CheckWebURL accepts an absolute http or https URL with a host, at most 2048 characters.
func CheckWebURL(s, param string) error {
	if s == "" || len(s) > MaxURLLen || strings.ContainsAny(s, " \t\r\n") {
		return InvalidField(param, "%s must be an absolute http or https URL of at most %d characters.", param, MaxURLLen)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return InvalidField(param, "%s must be an absolute http or https URL of at most %d characters.", param, MaxURLLen)
	}
	return nil
}

// ValidEmail reports whether s is a bare e-mail address (no display name, no angle brackets),
// at most 254 characters, with a dotted domain.
func ValidEmail(s string) bool {
	if s == "" || len(s) > MaxEmailLen || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at < 1 {
		return false
	}
	domain := s[at+1:]
	return strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") &&
		!strings.HasSuffix(domain, ".") && !strings.Contains(domain, "..")
}
