// Package identity owns merchants, their API keys and their dashboard users (D1, interface
// 5.1): creating a merchant with its first keys, issuing and revoking keys, and turning an
// Authorization header into a core.Caller. It is pure: storage goes through Store.
package identity
