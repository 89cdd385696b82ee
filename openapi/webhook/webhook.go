// Package webhook is the receiving side of Kassa's webhooks in the Go SDK: it checks the
// Service-Signature header of a delivery and decodes the event envelope.
//
// This package is written by hand (it is not generated from the OpenAPI documents) and depends
// on the standard library only, so a merchant can vendor it alone.
//
//	func handle(w http.ResponseWriter, r *http.Request) {
//		payload, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
//		ev, err := webhook.ConstructEvent(payload, r.Header.Get(webhook.SignatureHeader), os.Getenv("KASSA_WEBHOOK_SECRET"))
//		if err != nil {
//			http.Error(w, "invalid signature", http.StatusBadRequest)
//			return
//		}
//		switch ev.Type { // ignore types you do not know
//		case "checkout.session.completed":
//			…
//		}
//		w.WriteHeader(http.StatusOK)
//	}
//
// The header has the form `t=<unix>,v1=<hex>[,v1=<hex>…]`: v1 is the hex HMAC-SHA256 of
// "<t>.<raw body>" keyed with the whole `whsec_…` secret. While the merchant rotates a secret,
// deliveries carry one v1 per valid secret; any one matching is enough.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	SignatureHeader   = "Service-Signature"
	EventIDHeader     = "Service-Event-Id"
	EventTypeHeader   = "Service-Event-Type"
	EnvironmentHeader = "Service-Environment"
	AttemptHeader     = "Service-Delivery-Attempt"
)

// DefaultTolerance is how far the signed timestamp may be from now (either way) when no
// tolerance is given: it bounds how long a captured delivery can be replayed.
const DefaultTolerance = 5 * time.Minute

// APIVersion is the envelope version this package decodes.
const APIVersion = "2026-11-01"

// Reason says why a signature was refused.
type Reason string

const (
	// ReasonInvalidHeader: the header is empty or malformed (no t, a bad t, a bad v1).
	ReasonInvalidHeader Reason = "invalid_header"
	// ReasonNoSignatures: the header carries no v1 signature.
	ReasonNoSignatures Reason = "no_signatures"
	// ReasonTimestampOutsideTolerance: the signed timestamp is too old (or too far ahead).
	ReasonTimestampOutsideTolerance Reason = "timestamp_outside_tolerance"
	// ReasonNoMatchingSignature: no v1 matches the payload under the secret.
	ReasonNoMatchingSignature Reason = "no_matching_signature"
	// ReasonInvalidPayload: the signature is valid but the payload is not an event envelope.
	ReasonInvalidPayload Reason = "invalid_payload"
)

// Error is returned by Verify and ConstructEvent. It matches the sentinel of its Reason with
// errors.Is, whatever its detail.
type Error struct {
	Reason Reason
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "webhook: " + string(e.Reason)
	}
	return "webhook: " + string(e.Reason) + ": " + e.Detail
}

// Is matches on the reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason == e.Reason
}

// Sentinels, one per reason, for errors.Is.
var (
	ErrInvalidHeader             = &Error{Reason: ReasonInvalidHeader}
	ErrNoSignatures              = &Error{Reason: ReasonNoSignatures}
	ErrTimestampOutsideTolerance = &Error{Reason: ReasonTimestampOutsideTolerance}
	ErrNoMatchingSignature       = &Error{Reason: ReasonNoMatchingSignature}
	ErrInvalidPayload            = &Error{Reason: ReasonInvalidPayload}
)

// Verify checks header (the Service-Signature value) against the raw payload and secret (the
// whole `whsec_…` string). It accepts when the timestamp is within tolerance of now (0 means
// DefaultTolerance; a negative tolerance disables the check) and at least one v1 signature
// matches, compared in constant time. Elements other than t and v1 are ignored, so that later
// schemes can be added.
func Verify(payload []byte, header string, secret string, tolerance time.Duration, now time.Time) error {
	ts, sigs, err := parseHeader(header)
	if err != nil {
		return err
	}
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	if tolerance > 0 {
		age := now.Sub(time.Unix(ts, 0))
		if age > tolerance || age < -tolerance {
			return &Error{Reason: ReasonTimestampOutsideTolerance,
				Detail: "signed at " + strconv.FormatInt(ts, 10) + ", now " + strconv.FormatInt(now.Unix(), 10)}
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(payload)
	expected := mac.Sum(nil)
	ok := 0
	for _, s := range sigs {
		// Check every signature, so timing does not tell which one matched.
		ok |= hmacEqual(expected, s)
	}
	if ok == 0 {
		return ErrNoMatchingSignature
	}
	return nil
}

func hmacEqual(a, b []byte) int {
	if hmac.Equal(a, b) {
		return 1
	}
	return 0
}

func parseHeader(header string) (int64, [][]byte, error) {
	if strings.TrimSpace(header) == "" {
		return 0, nil, &Error{Reason: ReasonInvalidHeader, Detail: "empty " + SignatureHeader + " header"}
	}
	var (
		ts    int64
		haveT bool
		sigs  [][]byte
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return 0, nil, &Error{Reason: ReasonInvalidHeader, Detail: "element without '='"}
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || haveT {
				return 0, nil, &Error{Reason: ReasonInvalidHeader, Detail: "bad or repeated timestamp"}
			}
			ts, haveT = n, true
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return 0, nil, &Error{Reason: ReasonInvalidHeader, Detail: "bad v1 signature"}
			}
			sigs = append(sigs, b)
		}
	}
	if !haveT {
		return 0, nil, &Error{Reason: ReasonInvalidHeader, Detail: "no timestamp"}
	}
	if len(sigs) == 0 {
		return 0, nil, ErrNoSignatures
	}
	return ts, sigs, nil
}

// Event is the envelope of a delivery (D10).
type Event struct {
	ID          string `json:"id"`     // evt_…; deduplicate on it (delivery is at least once)
	Object      string `json:"object"` // always "event"
	Type        string `json:"type"`
	Environment string `json:"environment"` // "test" or "live"
	// Installation is the app installation (a UUID) an app event is delivered for; empty in
	// merchant webhooks.
	Installation string    `json:"installation,omitempty"`
	APIVersion   string    `json:"api_version"`
	Created      int64     `json:"created"` // Unix seconds
	Data         EventData `json:"data"`
}

// EventData holds the resource at event time, left raw so the caller decodes it into the type
// that fits ev.Type.
type EventData struct {
	Object json.RawMessage `json:"object"`
}

// ConstructEvent verifies the delivery with DefaultTolerance against the current time and
// decodes its envelope.
func ConstructEvent(payload []byte, header, secret string) (*Event, error) {
	return ConstructEventAt(payload, header, secret, DefaultTolerance, time.Now())
}

// ConstructEventAt is ConstructEvent with an explicit tolerance and current time.
func ConstructEventAt(payload []byte, header, secret string, tolerance time.Duration, now time.Time) (*Event, error) {
	if err := Verify(payload, header, secret, tolerance, now); err != nil {
		return nil, err
	}
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, &Error{Reason: ReasonInvalidPayload, Detail: err.Error()}
	}
	if ev.Object != "event" || ev.ID == "" || ev.Type == "" {
		return nil, &Error{Reason: ReasonInvalidPayload, Detail: "not an event envelope"}
	}
	return &ev, nil
}
