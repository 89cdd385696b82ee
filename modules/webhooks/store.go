package webhooks

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Store keeps endpoints, deliveries and attempts. Endpoint methods are confined to one scope;
// unknown ids, and ids of another merchant or environment, answer ErrNotFound (an endpoint)
// or ErrDeliveryNotFound (a delivery). The store never reads a clock: the time of a change
// comes in as now. FanOut, ClaimDue, RecordAttempt and NextDue are the background
// work and span every scope.
type Store interface {
	// InsertEndpoint saves a new endpoint, refusing with ErrEndpointLimit when the scope
	// already has MaxEndpoints.
	InsertEndpoint(ctx context.Context, e *Endpoint) error
	// GetEndpoint reads one endpoint.
	GetEndpoint(ctx context.Context, scope core.Scope, id string) (*Endpoint, error)
	// ListEndpoints returns the scope's endpoints, newest first (at most MaxEndpoints).
	ListEndpoints(ctx context.Context, scope core.Scope) ([]*Endpoint, error)
	// UpdateEndpoint locks the endpoint for one transaction and calls fn with it; when fn
	// returns nil the new state is written. When the endpoint ends disabled, its pending
	// deliveries become disabled (completed at now) in the same transaction.
	UpdateEndpoint(ctx context.Context, scope core.Scope, id string, now time.Time, fn func(*Endpoint) error) (*Endpoint, error)
	// DeleteEndpoint removes the endpoint with its deliveries and attempts.
	DeleteEndpoint(ctx context.Context, scope core.Scope, id string) error

	// FanOut takes up to limit events written to the outbox and not yet fanned out (claimed
	// with FOR UPDATE SKIP LOCKED, so concurrent callers share the work), and creates one
	// pending delivery, due at once, for each enabled endpoint of the event's scope for which
	// match is true; the event is then marked done in the same transaction. It returns how
	// many events it took.
	FanOut(ctx context.Context, limit int, now time.Time, match func(e *Endpoint, eventType string) bool) (int, error)
	// ClaimDue takes up to limit pending deliveries of enabled endpoints whose next attempt is
	// due at now, with FOR UPDATE SKIP LOCKED, and in the same transaction reserves their next
	// attempt number and moves next_attempt_at to now+lease, then commits. A job is therefore
	// handed to one caller only; if that caller dies, the delivery becomes due again when the
	// lease ends and is retried under the next attempt number.
	ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Job, error)
	// RecordAttempt stores the attempt of job and, with the job's endpoint locked, calls fn,
	// which updates the endpoint and returns what becomes of the delivery. The delivery is
	// changed only if it still holds the job's attempt number (a delivery retaken after its
	// lease ended is left to its new owner). When the endpoint ends disabled, its other
	// pending deliveries become disabled too. fn may be called more than once, each time on a
	// fresh read of the endpoint; only the last call's endpoint and result are kept, so fn must
	// have no other effect. now is when the outcome is recorded (a delivery that ends, and
	// deliveries disabled with their endpoint, complete at now).
	RecordAttempt(ctx context.Context, job *Job, a Attempt, now time.Time, fn func(e *Endpoint) Next) error
	// NextDue returns when the earliest pending delivery of an enabled endpoint falls due, or
	// ok false when there is none.
	NextDue(ctx context.Context) (at time.Time, ok bool, err error)

	// ListDeliveries pages the deliveries of one endpoint of the scope, newest first (the
	// endpoint's existence is checked by the caller). A cursor that is not a delivery of that
	// endpoint is ErrUnknownCursor.
	ListDeliveries(ctx context.Context, scope core.Scope, endpointID string, q core.ListQuery) (core.Page[*Delivery], error)
	// GetDelivery reads one delivery of the scope with its attempts, oldest first; unknown and
	// foreign ids answer ErrDeliveryNotFound.
	GetDelivery(ctx context.Context, scope core.Scope, id string) (*DeliveryDetail, error)
	// Redeliver makes one delivery of the scope pending and due at now, whatever its status,
	// and wakes the workers. With the delivery and its endpoint locked it refuses with
	// ErrEndpointDisabled when the endpoint is disabled.
	Redeliver(ctx context.Context, scope core.Scope, id string, now time.Time) (*Delivery, error)
	// InsertTestDelivery stores a synthetic event (never written to the events outbox) with
	// one pending delivery, due at now, to the endpoint endpointID of the scope, and wakes the
	// workers. The endpoint is locked while checked: a disabled endpoint gets
	// ErrEndpointDisabled, an unknown one ErrNotFound.
	InsertTestDelivery(ctx context.Context, endpointID string, ev OutboxEvent, now time.Time) (*Delivery, error)
}

// OutboxEvent is an event as read for delivery: a kept event of the outbox, or a test event
// (TestEventType, about the endpoint it is sent to) kept in its delivery. The worker renders
// data.object for the channel of the delivery (Render).
type OutboxEvent = core.EventRecord

// Job is one claimed attempt: a delivery, the attempt number reserved for it, its endpoint
// (with secrets) and its event.
type Job struct {
	DeliveryID string
	Attempt    int // 1-based, reserved by the claim
	Endpoint   *Endpoint
	Event      OutboxEvent
	// Installation is the app installation an app delivery is for (its envelope's
	// installation); empty for a merchant delivery.
	Installation string
}

// InterruptedError is the error of an attempt whose outcome was never recorded: the worker
// that held it stopped (or overran its lease) before it could. The store writes it into the
// attempt log when the delivery is claimed again, so every attempt number handed out appears
// there; if the slow worker records after all, its outcome replaces this placeholder.
const InterruptedError = "interrupted: no outcome was recorded before the attempt's reservation ended (the sending process stopped); the event is sent again"

// Attempt is the record of one attempt, kept for the dashboard.
type Attempt struct {
	Number    int
	StartedAt time.Time
	Outcome   Outcome
}
