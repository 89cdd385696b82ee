package kit

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/kassa-pay/kassa/core"
)

// RetryAfterUnavailable is the Retry-After (seconds) of a 503 service_unavailable.
const RetryAfterUnavailable = 5

// serviceUnavailable is what a client sees while the database cannot be reached: 503 with
// Retry-After, to be retried like any transient failure (with the same Idempotency-Key).
var serviceUnavailable = &core.Error{Type: core.TypeAPI, Code: codeUnavailable,
	Message: "The service is temporarily unavailable. Retry after the number of seconds in Retry-After, with the same Idempotency-Key."}

// sqlStater is an error carrying a SQLSTATE code (the database driver's errors).
type sqlStater interface{ SQLState() string }

// unavailable reports whether err says that the database (or the network to it) is down, as
// opposed to a failure of the request itself: no connection could be made or a connection
// broke (a refused or reset dial, a connection the driver marked bad), or the server refused
// or ended the session (SQLSTATE class 08 connection exception, class 53 insufficient
// resources such as too_many_connections, 57P01–57P03 shutting down or starting up).
func unavailable(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var st sqlStater
	if errors.As(err, &st) {
		code := st.SQLState()
		switch {
		case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"),
			code == "57P01", code == "57P02", code == "57P03":
			return true
		}
	}
	return false
}
