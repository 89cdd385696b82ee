package kit

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/kassa-pay/kassa/core"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyCaller
	keyRoute
	keyLogInfo
)

// RequestID returns the request's req_ id (empty outside a request).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// logInfo collects what the access log line reports but later middleware learns.
type logInfo struct {
	route        string
	merchant     string
	env          core.Environment
	installation string // the app installation of an App API request
}

// LogInstallation records, for the access log line, the app installation whose token
// authenticated the request (the App API).
func LogInstallation(ctx context.Context, id string) { infoOf(ctx).installation = id }

func infoOf(ctx context.Context) *logInfo {
	li, _ := ctx.Value(keyLogInfo).(*logInfo)
	if li == nil {
		return &logInfo{}
	}
	return li
}

// statusWriter remembers the status for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Outer is the outermost middleware of every listener: it assigns the request id (sent as the
// Request-Id header on every response), recovers panics into an opaque 500, and writes one
// structured log line per request. A path with an empty, "." or ".." segment is answered
// here with the 404 envelope (never the standard library's redirect). It never logs headers, bodies, query strings or secrets.
func Outer(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := core.NewID(core.PrefixRequest)
		li := &logInfo{}
		ctx := context.WithValue(context.WithValue(r.Context(), keyRequestID, id), keyLogInfo, li)
		r = r.WithContext(ctx)
		w.Header().Set("Request-Id", id)
		// Every answer is what its Content-Type says: no browser sniffs an error envelope or
		// a served document into something else.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler { //nolint:errorlint // recover() gives back the very value passed to panic, and net/http panics with this sentinel itself
					panic(p)
				}
				log.ErrorContext(ctx, "panic", "request_id", id, "panic", p)
				if sw.status == 0 {
					WriteEnvelope(sw, id, internalError, "")
				}
			}
			route := li.route
			if route == "" {
				// A page handler's net/http pattern (e.g. "GET /c/{id}"): never the path
				// itself, which may carry ids, nor the query, which may carry a secret.
				route = r.Pattern
			}
			if route == "" {
				route = "unmatched"
			}
			attrs := []any{"method", r.Method, "route", route, "status", sw.status,
				"latency_ms", float64(time.Since(start).Microseconds()) / 1000, "request_id", id}
			if li.merchant != "" {
				attrs = append(attrs, "merchant", li.merchant, "environment", string(li.env))
			}
			if li.installation != "" {
				attrs = append(attrs, "installation", li.installation)
			}
			log.LogAttrs(ctx, slog.LevelInfo, "request", toAttrs(attrs)...)
		}()
		if !cleanPath(r.URL.Path) {
			WriteError(sw, r, unknownPath(r))
			return
		}
		next.ServeHTTP(sw, r)
	})
}

func toAttrs(kv []any) []slog.Attr {
	out := make([]slog.Attr, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, slog.Any(kv[i].(string), kv[i+1]))
	}
	return out
}
