package kit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// staleLease is how long an in-flight claim is honoured before it is presumed abandoned (its
// process died). It is well above the server's write timeout, so a live request never loses
// its claim.
const staleLease = 2 * time.Minute

// idempotent implements D4 around serve: one execution per (merchant, environment, method,
// path, key); the outcome is stored and replayed verbatim for 24 h; a different body is 409
// idempotency_key_reused; a concurrent duplicate is 409 idempotency_key_in_use; 401, 429 and
// 5xx are not stored so that a retry runs again.
func (g *Gate) idempotent(w http.ResponseWriter, r *http.Request, values []string, body []byte, serve func(http.ResponseWriter)) {
	if len(values) != 1 || !validIdempotencyKey(values[0]) {
		WriteError(w, r, core.Invalid(codeIdempotencyInvalid, "", "Idempotency-Key must be 1 to 255 printable ASCII characters."))
		return
	}
	caller := CallerFrom(r.Context())
	k := ports.IdempotencyKey{Scope: caller.Scope, Method: r.Method, Path: r.URL.Path, Key: values[0]}
	hash := canonicalHash(body)
	now, err := g.cfg.Clocks.Now(r.Context(), caller.Scope)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	rec, err := g.cfg.Idempotency.Claim(r.Context(), k, hash, now, now.Add(-g.cfg.Retention), now.Add(-staleLease))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if rec != nil {
		switch {
		case !bytes.Equal(rec.RequestHash, hash):
			WriteError(w, r, core.NewError(core.TypeIdempotency, codeKeyReused, "",
				"Keys for idempotent requests can only be used with the same parameters they were first used with. This key was reused with a different request body."))
		case rec.InFlight:
			WriteError(w, r, core.NewError(core.TypeIdempotency, codeKeyInUse, "",
				"A request with this Idempotency-Key is still being processed. Retry once it has finished."))
		default:
			w.Header().Set("Content-Type", rec.ContentType)
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(rec.Status)
			_, _ = w.Write(rec.Body)
		}
		return
	}

	buf := &bufferedWriter{header: w.Header()}
	done := false
	defer func() {
		if !done { // a panic in serve: forget the claim so a retry runs again
			_ = g.cfg.Idempotency.Release(context.WithoutCancel(r.Context()), k)
		}
	}()
	serve(buf)
	done = true
	status := buf.statusCode()
	store := context.WithoutCancel(r.Context())
	if status == http.StatusUnauthorized || status == http.StatusTooManyRequests || status >= 500 {
		_ = g.cfg.Idempotency.Release(store, k)
	} else if err := g.cfg.Idempotency.Complete(store, k, status, w.Header().Get("Content-Type"), buf.body.Bytes()); err != nil {
		// The change is committed but its outcome could not be recorded: answer with it anyway;
		// the claim stays in flight (409 in_use to retries) until the stale lease ends.
		slog.ErrorContext(r.Context(), "idempotency: storing the outcome failed", "request_id", RequestID(r.Context()), "error", err.Error())
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.body.Bytes())
}

func validIdempotencyKey(k string) bool {
	if len(k) < 1 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// canonicalHash hashes the canonical form of a JSON body, so key order and whitespace do not
// matter (D4); a body that is not JSON is hashed as it is.
func canonicalHash(body []byte) []byte {
	canon := body
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if b, err := json.Marshal(v); err == nil { // maps marshal with sorted keys
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return sum[:]
}

// bufferedWriter holds a response until the idempotency outcome is decided.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedWriter) statusCode() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}
