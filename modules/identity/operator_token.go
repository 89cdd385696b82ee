package identity

import (
	"crypto/subtle"
	"strings"
)

// OperatorTokenValid reports whether the Authorization header value carries the configured
// operator token as a Bearer token, comparing in constant time. An empty configured token
// disables the operator API: it never matches.
func OperatorTokenValid(header, token string) bool {
	if token == "" {
		return false
	}
	scheme, presented, _ := strings.Cut(strings.TrimSpace(header), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	presented = strings.TrimSpace(presented)
	return subtle.ConstantTimeCompare([]byte(presented), []byte(token)) == 1
}
