package kit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// requestDeadline bounds an idempotent request, whose unit of work holds the key's lock: well
// below the server's write timeout, and above the unit of work's statement and idle timeouts,
// which bound it on the database's side even when this process stalls.
const requestDeadline = 30 * time.Second

// Outcomes of the unit of work that roll it back.
var (
	errKeyInUse  = core.NewError(core.TypeIdempotency, codeKeyInUse, "", "A request with this Idempotency-Key is still being processed. Retry once it has finished.")
	errNotStored = errors.New("idempotency: outcome not stored")
)

// idempotent implements D4 around serve, exactly once whatever crashes: one unit of work
// (transaction) takes a transaction-scoped lock on the key (held: 409 idempotency_key_in_use),
// reads the stored record (same body: replayed verbatim with Idempotent-Replayed: true;
// another body: 409 idempotency_key_reused), and otherwise runs serve with that unit of work
// in the request context, so every store the operation calls writes in it, and stores the
// response in it before the commit. The change and its record are committed together or not
// at all; the lock ends with the transaction (and with its connection, should the process
// die), so there is nothing to take over. 401, 429, 5xx and panics roll everything back and
// store nothing, so that a retry runs again. The record is dated on the scope's clock, and
// expires 24 h later on that clock (D12); the lock does not depend on any clock.
//
// An operation that must call the network (a processor, for a future refund) cannot run inside
// one transaction. It will opt out through the route (a set of operation ids in GateConfig):
// the gate then runs the same lock-and-read unit of work first, lets the operation record a
// pending attempt under the key in a transaction of its own, call out with no connection held,
// and complete the attempt and the stored response in a second transaction — the pattern of
// the webhook worker and of charge attempts. Every merchant POST today is database work only.
func (g *Gate) idempotent(w http.ResponseWriter, r *http.Request, values []string, body []byte, serve func(http.ResponseWriter, *http.Request)) {
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
	ctx, cancel := context.WithTimeout(r.Context(), requestDeadline)
	defer cancel()

	var out *bufferedWriter // the response of the last attempt (the unit of work may retry)
	var replay *ports.IdempotencyRecord
	err = g.cfg.UnitOfWork.Do(ctx, func(ctx context.Context) error {
		out, replay = nil, nil
		ok, err := g.cfg.Idempotency.Lock(ctx, k)
		if err != nil {
			return err
		}
		if !ok {
			return errKeyInUse
		}
		rec, err := g.cfg.Idempotency.Get(ctx, k, now.Add(-g.cfg.Retention))
		if err != nil {
			return err
		}
		if rec != nil {
			replay = rec
			return nil
		}
		out = &bufferedWriter{header: http.Header{}}
		serve(out, r.WithContext(ctx))
		status := out.statusCode()
		if status == http.StatusUnauthorized || status == http.StatusTooManyRequests || status >= 500 {
			return errNotStored
		}
		return g.cfg.Idempotency.Put(ctx, k, ports.IdempotencyRecord{RequestHash: hash, Status: status,
			ContentType: out.header.Get("Content-Type"), Body: out.body.Bytes(), CreatedAt: now})
	})
	switch {
	case errors.Is(err, errNotStored):
		out.send(w) // rolled back: a retry runs again
	case err != nil:
		// Nothing was committed (the key in use, or the database failed): the envelope says
		// so, and a 500 invites the retry that will run the request again.
		WriteError(w, r, err)
	case replay == nil:
		out.send(w)
	case !bytes.Equal(replay.RequestHash, hash):
		WriteError(w, r, core.NewError(core.TypeIdempotency, codeKeyReused, "",
			"Keys for idempotent requests can only be used with the same parameters they were first used with. This key was reused with a different request body."))
	default:
		w.Header().Set("Content-Type", replay.ContentType)
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(replay.Status)
		_, _ = w.Write(replay.Body)
	}
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

// bufferedWriter holds a response, headers included, until the unit of work has committed or
// rolled back: an attempt the unit of work runs again leaves nothing behind.
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

// send writes the held response to w.
func (b *bufferedWriter) send(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.statusCode())
	_, _ = w.Write(b.body.Bytes())
}

func (b *bufferedWriter) statusCode() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}
