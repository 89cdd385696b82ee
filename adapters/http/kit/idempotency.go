package kit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// requestDeadline bounds an idempotent request of the one-transaction shape, whose unit of
// work holds the key's lock: well below the server's write timeout, and above the unit of
// work's statement and idle timeouts, which bound it on the database's side even when this
// process stalls.
const requestDeadline = 30 * time.Second

// Outcomes of the unit of work that roll it back.
var (
	errKeyInUse  = core.NewError(core.TypeIdempotency, codeKeyInUse, "", "A request with this Idempotency-Key is still being processed. Retry once it has finished.")
	errKeyReused = core.NewError(core.TypeIdempotency, codeKeyReused, "",
		"Keys for idempotent requests can only be used with the same parameters they were first used with. This key was reused with a different request body.")
	errNotStored = errors.New("idempotency: outcome not stored")
)

// The two shapes of a keyed request, chosen per operation by the spec's
// x-kassa-idempotency extension and written in the operation's description.
type idempotencyShape int

const (
	// shapeTransaction: the operation only writes the database. One unit of work holds the
	// key's lock, runs the operation and stores its response: both commit together.
	shapeTransaction idempotencyShape = iota
	// shapePhases: the operation calls out of the process. Phase 1 records the key as
	// started and commits; the operation's phases each commit on their own, moving the key's
	// recovery point (ports.KeyPhases); the last phase stores the response.
	shapePhases
)

// idempotencyShapeOf reads an operation's shape: x-kassa-idempotency absent or
// "transaction", or "phases".
func idempotencyShapeOf(op *openapi3.Operation) (idempotencyShape, error) {
	v, ok := op.Extensions["x-kassa-idempotency"]
	if !ok {
		return shapeTransaction, nil
	}
	switch v {
	case "transaction":
		return shapeTransaction, nil
	case "phases":
		return shapePhases, nil
	}
	return 0, fmt.Errorf("gate: %s: x-kassa-idempotency %v: want transaction or phases", op.OperationID, v)
}

// idempotent implements D4 around serve, exactly once whatever crashes.
//
// Whatever the shape, a completed key is answered first, from the record read without any
// lock: the same body is replayed verbatim with Idempotent-Replayed: true, another body is 409
// idempotency_key_reused. Any number of concurrent replays of a completed key are answered
// so; none waits for or competes for the key's lock. Keys are dated on the wall clock and
// expire Retention (24 h) later in real time: a sandbox test clock, however far it is
// advanced, never expires a key (D4's 24 h is the client's retry window).
//
// Otherwise the key's lock decides who runs: held by a live request, 409
// idempotency_key_in_use. Under the lock the record is read again (the holder before may have
// just completed it), and then the operation runs in its shape (idempotentInTransaction,
// idempotentInPhases). 401, 429, 5xx and panics store no response, so that a retry runs
// again (in the phased shape: resumes from the key's recovery point).
func (g *Gate) idempotent(w http.ResponseWriter, r *http.Request, values []string, body []byte, shape idempotencyShape, serve func(http.ResponseWriter, *http.Request)) {
	if len(values) != 1 || !validIdempotencyKey(values[0]) {
		WriteError(w, r, core.Invalid(codeIdempotencyInvalid, "", "Idempotency-Key must be 1 to 255 printable ASCII characters."))
		return
	}
	caller := CallerFrom(r.Context())
	k := ports.IdempotencyKey{Scope: caller.Scope, Method: r.Method, Path: r.URL.Path, Key: values[0]}
	hash := canonicalHash(body)
	now := g.cfg.Wall.Now()
	notBefore := now.Add(-g.cfg.Retention)

	rec, err := g.cfg.Idempotency.Get(r.Context(), k, notBefore)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if rec != nil && (rec.Completed() || !bytes.Equal(rec.RequestHash, hash)) {
		answerStored(w, r, rec, hash)
		return
	}
	if shape == shapePhases {
		g.idempotentInPhases(w, r, k, hash, now, notBefore, serve)
		return
	}
	g.idempotentInTransaction(w, r, k, hash, now, notBefore, serve)
}

// answerStored answers a request from the record of its key: a replay of the stored
// response, or 409 idempotency_key_reused for another body.
func answerStored(w http.ResponseWriter, r *http.Request, rec *ports.IdempotencyRecord, hash []byte) {
	if !bytes.Equal(rec.RequestHash, hash) {
		WriteError(w, r, errKeyReused)
		return
	}
	w.Header().Set("Content-Type", rec.ContentType)
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(rec.Status)
	_, _ = w.Write(rec.Body)
}

// stored reports whether a response of this status is stored under its key.
func stored(status int) bool {
	return status != http.StatusUnauthorized && status != http.StatusTooManyRequests && status < 500
}

// idempotentInTransaction is the one-transaction shape: one unit of work takes a
// transaction-scoped lock on the key, reads the record again, and otherwise runs serve with
// the unit of work's context, so the operation's own units of work join it (a nested Do, in a
// savepoint), and stores the response in it before the commit. The change and its record are
// committed together or not at all; the lock ends with the transaction (and with its
// connection, should the process die), so there is nothing to take over.
//
// What the gate keeps in that context is the transaction for a nested Do to join, and the
// mark of a unit of work (ports.WithinTransaction): the operation's calls out of the process
// answer ports.ErrInsideTransaction. Its stores still run on the pool: they see only what is
// committed, so an operation of this shape writes everything through its units of work.
func (g *Gate) idempotentInTransaction(w http.ResponseWriter, r *http.Request, k ports.IdempotencyKey, hash []byte, now, notBefore time.Time, serve func(http.ResponseWriter, *http.Request)) {
	ctx, cancel := context.WithTimeout(r.Context(), requestDeadline)
	defer cancel()
	if g.admit != nil {
		select {
		case g.admit <- struct{}{}:
			defer func() { <-g.admit }()
		case <-ctx.Done():
			WriteError(w, r, fmt.Errorf("idempotency: waiting for a transaction: %w", ctx.Err()))
			return
		}
	}
	var out *bufferedWriter // the response of the last attempt (the unit of work may retry)
	var replay *ports.IdempotencyRecord
	err := g.cfg.UnitOfWork.Do(ctx, func(ctx context.Context, tx ports.IdempotencyTx) error {
		out, replay = nil, nil
		keys := tx.IdempotencyKeys()
		ok, err := keys.Lock(ctx, k)
		if err != nil {
			return err
		}
		if !ok {
			return errKeyInUse
		}
		rec, err := keys.Get(ctx, k, notBefore)
		if err != nil {
			return err
		}
		if rec != nil {
			replay = rec
			return nil
		}
		out = &bufferedWriter{header: http.Header{}}
		serve(out, r.WithContext(ctx))
		if !stored(out.statusCode()) {
			return errNotStored
		}
		return keys.Put(ctx, k, ports.IdempotencyRecord{RequestHash: hash, Status: out.statusCode(),
			ContentType: out.header.Get("Content-Type"), Body: out.body.Bytes(), CreatedAt: now})
	})
	switch {
	case errors.Is(err, errNotStored):
		out.send(w) // rolled back: a retry runs again
	case err != nil:
		// Nothing was committed (the key in use, or the database failed): the envelope says
		// so, and a 500 invites the retry that will run the request again.
		WriteError(w, r, err)
	case replay != nil:
		answerStored(w, r, replay, hash)
	default:
		out.send(w)
	}
}

// idempotentInPhases is the phased shape. The key's lock is a session-level lock held for the
// whole request on a connection outside any transaction (IdempotencyStore.Hold): a live
// request keeps it, a dead one loses it with its connection, so a retry after a crash takes
// the key over at once. Under it:
//
//  1. A key without a record is recorded as started, with the request's hash, and that
//     commits (phase 1). A started key (a crash, or a 5xx, cut its request) is resumed: the
//     operation starts from its recovery point.
//  2. serve runs with no transaction open, the key in its context (ports.KeyPhasesFrom):
//     each of its phases is a unit of work of its own, or a call out of the process between
//     them, and records its recovery point (KeyPhases.Reach alone, or RecoveryPoints.Reach in
//     the phase's unit of work, committed with its change).
//  3. The response is stored (the last phase) and sent. A response that is not stored (401,
//     429, 5xx) leaves the key started at its point, for the retry to resume.
func (g *Gate) idempotentInPhases(w http.ResponseWriter, r *http.Request, k ports.IdempotencyKey, hash []byte, now, notBefore time.Time, serve func(http.ResponseWriter, *http.Request)) {
	ctx := r.Context()
	release, ok, err := g.cfg.Idempotency.Hold(ctx, k)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if !ok {
		WriteError(w, r, errKeyInUse)
		return
	}
	defer release()
	rec, err := g.cfg.Idempotency.Get(ctx, k, notBefore)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	phases := &keyPhases{store: g.cfg.Idempotency, key: k}
	switch {
	case rec != nil && (rec.Completed() || !bytes.Equal(rec.RequestHash, hash)):
		answerStored(w, r, rec, hash) // completed by the holder before
		return
	case rec != nil:
		phases.point = rec.RecoveryPoint
	default:
		if err := g.cfg.Idempotency.Start(ctx, k, hash, now); err != nil {
			WriteError(w, r, err)
			return
		}
	}
	out := &bufferedWriter{header: http.Header{}}
	serve(out, r.WithContext(ports.WithKeyPhases(ctx, phases)))
	if stored(out.statusCode()) {
		if err := g.cfg.Idempotency.Finish(ctx, k, ports.IdempotencyRecord{RequestHash: hash, Status: out.statusCode(),
			ContentType: out.header.Get("Content-Type"), Body: out.body.Bytes(), CreatedAt: now}); err != nil {
			// The operation is done but its response is not stored: the retry resumes from
			// the last point and answers again.
			WriteError(w, r, err)
			return
		}
	}
	out.send(w)
}

// keyPhases is ports.KeyPhases of one request of the phased shape.
type keyPhases struct {
	store ports.IdempotencyStore
	key   ports.IdempotencyKey
	point string
}

func (p *keyPhases) Key() ports.IdempotencyKey { return p.key }
func (p *keyPhases) Point() string             { return p.point }

func (p *keyPhases) Reach(ctx context.Context, point string) error {
	if err := p.store.Reach(ctx, p.key, point); err != nil {
		return err
	}
	p.point = point
	return nil
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
