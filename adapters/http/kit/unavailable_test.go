package kit

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
)

type sqlState string

func (s sqlState) Error() string    { return "pq: " + string(s) }
func (s sqlState) SQLState() string { return string(s) }

// While the database cannot be reached the APIs answer 503 service_unavailable with
// Retry-After, not an opaque 500: a refused dial, a connection the driver gave up, the server
// shutting down or out of connections. Other failures stay 500 internal_error.
func TestDatabaseUnavailableIs503(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"refused dial", fmt.Errorf("checkout: insert: %w", refused), 503},
		{"bad connection", fmt.Errorf("uow: %w", driver.ErrBadConn), 503},
		{"admin shutdown", fmt.Errorf("store: %w", sqlState("57P01")), 503},
		{"cannot connect now", sqlState("57P03"), 503},
		{"too many connections", sqlState("53300"), 503},
		{"connection failure", sqlState("08006"), 503},
		{"a unique violation is not unavailability", sqlState("23505"), 500},
		{"a statement timeout is not unavailability", sqlState("57014"), 500},
		{"any other failure", errors.New("boom"), 500},
	} {
		w := httptest.NewRecorder()
		WriteError(w, httptest.NewRequest("GET", "/v1/checkout/sessions", nil), c.err)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
			continue
		}
		var env errorEnvelope
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		if c.want == 503 {
			if env.Error.Type != "api_error" || env.Error.Code != "service_unavailable" || w.Header().Get("Retry-After") != "5" {
				t.Errorf("%s: %+v, Retry-After %q", c.name, env.Error, w.Header().Get("Retry-After"))
			}
		} else if env.Error.Code != "internal_error" || w.Header().Get("Retry-After") != "" {
			t.Errorf("%s: %+v, Retry-After %q", c.name, env.Error, w.Header().Get("Retry-After"))
		}
	}
}
