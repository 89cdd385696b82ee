package webhooks

import (
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"
)

// RetrySchedule is the wait before each retry after a failed attempt (D10): the first retry
// comes 5 s after the first attempt fails, the last 24 h after the ninth. About 3 days in all.
var RetrySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// MaxAttempts is the first attempt plus one per retry.
var MaxAttempts = len(RetrySchedule) + 1

// Jitter is the relative spread applied to every retry delay (±10%), so that the retries of
// many deliveries failing together do not arrive together.
const Jitter = 0.10

// FailureWindow of uninterrupted failure disables an endpoint (D10).
const FailureWindow = 5 * 24 * time.Hour

// Timeout is how long the receiver has to answer (D10, interface 8).
const Timeout = 10 * time.Second

// ExcerptLimit caps the recorded excerpt of a response body, in bytes.
const ExcerptLimit = 4096

// RetryDelay returns the wait after the given number of failed attempts (1-based) with jitter
// applied from r, a uniform number in [0, 1): the delay times 1 + (2r-1)·Jitter. ok is false
// when no retry is left.
func RetryDelay(failedAttempts int, r float64) (d time.Duration, ok bool) {
	if failedAttempts < 1 || failedAttempts > len(RetrySchedule) {
		return 0, false
	}
	base := RetrySchedule[failedAttempts-1]
	return time.Duration(float64(base) * (1 + (2*r-1)*Jitter)), true
}

// DefaultRand is the jitter source: math/rand/v2 (not a secret).
func DefaultRand() float64 { return rand.Float64() } //nolint:gosec // G404: retry jitter spreads load; nothing depends on it being unpredictable

// Outcome is the result of one delivery attempt as the sender saw it.
type Outcome struct {
	StatusCode int           // 0 when no response came
	Latency    time.Duration // from sending to the end of the response (or the failure)
	Excerpt    string        // the start of the response body, at most ExcerptLimit bytes
	Err        string        // transport failure (timeout, refused address, connection reset…), else ""
}

// Acknowledged reports whether the receiver took the event: a 2xx answer, nothing else (a
// redirect is not followed and does not acknowledge).
func (o Outcome) Acknowledged() bool { return o.Err == "" && o.StatusCode >= 200 && o.StatusCode < 300 }

// Gone reports a 410 Gone answer, which disables the endpoint.
func (o Outcome) Gone() bool { return o.Err == "" && o.StatusCode == 410 }

// Excerpt returns the start of a response body fit for storage: at most ExcerptLimit bytes,
// cut on a character boundary, invalid UTF-8 and NUL bytes replaced.
func Excerpt(b []byte) string {
	if len(b) > ExcerptLimit {
		b = b[:ExcerptLimit]
		// Drop a character cut in half by the limit.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// DeliveryStatus is the state of one event × endpoint delivery.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"   // waiting for its next attempt
	DeliverySucceeded DeliveryStatus = "succeeded" // acknowledged with a 2xx
	DeliveryFailed    DeliveryStatus = "failed"    // every attempt of the schedule failed
	DeliveryDisabled  DeliveryStatus = "disabled"  // the endpoint was disabled before success
)

// Next is what happens to a delivery after an attempt.
type Next struct {
	Status        DeliveryStatus
	NextAttemptAt *time.Time // set when Status is pending
}

// decide applies the policy to attempt number `attempt` (1-based) with outcome o at now;
// endpointDisabled says the endpoint is (now) disabled.
func decide(attempt int, o Outcome, now time.Time, endpointDisabled bool, r float64) Next {
	if o.Acknowledged() {
		return Next{Status: DeliverySucceeded}
	}
	if endpointDisabled {
		return Next{Status: DeliveryDisabled}
	}
	d, ok := RetryDelay(attempt, r)
	if !ok {
		return Next{Status: DeliveryFailed}
	}
	at := now.Add(d)
	return Next{Status: DeliveryPending, NextAttemptAt: &at}
}
