package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/modules/webhooks"
)

// attemptBatcher records the attempts whose endpoint health is unchanged (the fast path of
// RecordAttempt) in groups: the records that wait while one group is being written go in the
// next, with one statement and one commit for all of them. Each attempt still commits with
// its delivery's update, is reported recorded only once that commit succeeded, and is written
// only when its endpoint's health is still what its fn saw (locked FOR SHARE by the
// statement); the worker's rate is no longer one commit per attempt.
type attemptBatcher struct {
	db *sqlx.DB

	mu       sync.Mutex
	pending  []*attemptRecord
	flushers int // goroutines writing groups
}

// maxAttemptGroup bounds one group (17 array parameters and one text whatever its size); maxFlushers is how
// many groups are written at once, so that one group's commit does not hold up the next.
const (
	maxAttemptGroup = 64
	maxFlushers     = 4
)

// attemptRecord is one attempt waiting to be recorded and, once done is closed, its result.
type attemptRecord struct {
	job  *webhooks.Job
	a    webhooks.Attempt
	seen webhooks.EndpointSnapshot // the endpoint as fn saw it
	next webhooks.Next
	now  time.Time

	done     chan struct{}
	recorded bool  // the attempt was written (its endpoint's health was as seen)
	err      error // the group failed: nothing of it was written
}

// record queues r and waits for its group. It reports false when r's endpoint changed or was
// deleted meanwhile, and an error when its group could not be written; in both cases nothing
// of r was written.
func (b *attemptBatcher) record(ctx context.Context, r *attemptRecord) (bool, error) {
	r.done = make(chan struct{})
	b.mu.Lock()
	b.pending = append(b.pending, r)
	start := b.flushers < maxFlushers
	if start {
		b.flushers++
	}
	b.mu.Unlock()
	if start {
		go b.flush() //nolint:gosec // G118: the flush serves every waiting request, so it must not end with the one that started it
	}
	select {
	case <-r.done:
		return r.recorded, r.err
	case <-ctx.Done():
		// The group may still commit r; the caller treats this as a failed record, which
		// leaves the attempt's number reserved (as any failed record does).
		return false, ctx.Err()
	}
}

// flush writes groups until nothing is pending.
func (b *attemptBatcher) flush() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), maxAttemptGroup)
		if n == 0 {
			b.flushers--
			b.mu.Unlock()
			return
		}
		group := make([]*attemptRecord, n)
		copy(group, b.pending)
		b.pending = append(b.pending[:0], b.pending[n:]...)
		b.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		recorded, err := b.write(ctx, group)
		cancel()
		for _, r := range group {
			r.recorded, r.err = recorded[attemptKey{r.job.DeliveryID, r.a.Number}], err
			close(r.done)
		}
	}
}

type attemptKey struct {
	delivery string
	attempt  int
}

// write records the attempts of group whose endpoint health is unchanged, in one statement,
// and returns which it recorded.
func (b *attemptBatcher) write(ctx context.Context, group []*attemptRecord) (map[attemptKey]bool, error) {
	n := len(group)
	merchants, envs, endpoints, statuses := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	reasons, failing := make([]sql.NullString, n), make([]sql.NullString, n)
	deliveries, eventIDs, excerpts := make([]string, n), make([]string, n), make([]string, n)
	attempts, latencies := make([]int64, n), make([]int64, n)
	started, nextStatus := make([]string, n), make([]string, n)
	codes := make([]sql.NullInt64, n)
	errs, nextAt, completed := make([]sql.NullString, n), make([]sql.NullString, n), make([]sql.NullString, n)
	ts := func(t *time.Time) sql.NullString {
		if t == nil {
			return sql.NullString{}
		}
		return sql.NullString{String: t.UTC().Format(time.RFC3339Nano), Valid: true}
	}
	for i, r := range group {
		scope, o := r.job.Event.Scope, r.a.Outcome
		merchants[i], envs[i], endpoints[i] = scope.MerchantID, string(scope.Env), r.seen.ID
		statuses[i], reasons[i], failing[i] = string(r.seen.Status), nullString(string(r.seen.DisabledReason)), ts(r.seen.FailingSince)
		deliveries[i], attempts[i], eventIDs[i] = r.job.DeliveryID, int64(r.a.Number), r.job.Event.ID
		started[i], latencies[i], excerpts[i], errs[i] = ts(&r.a.StartedAt).String, o.Latency.Milliseconds(), o.Excerpt, nullString(o.Err)
		if o.StatusCode != 0 {
			codes[i] = sql.NullInt64{Int64: int64(o.StatusCode), Valid: true}
		}
		nextStatus[i], nextAt[i] = string(r.next.Status), ts(r.next.NextAttemptAt)
		if r.next.Status != webhooks.DeliveryPending {
			completed[i] = ts(&r.now)
		}
	}
	var rows []struct {
		DeliveryID string `db:"delivery_id"`
		Attempt    int    `db:"attempt"`
	}
	err := sqlx.SelectContext(ctx, b.db, &rows, `WITH input AS (
			SELECT i.*, 'pending'::text AS pending FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
				$7::text[], $8::int[], $9::text[], $10::timestamptz[], $11::bigint[], $12::int[], $13::text[],
				$14::text[], $15::text[], $16::timestamptz[], $17::timestamptz[])
				AS i(merchant_id, environment, endpoint_id, ep_status, ep_reason, ep_failing_since,
					delivery_id, attempt, event_id, started_at, latency_ms, status_code, response_excerpt,
					error, next_status, next_attempt_at, completed_at)
			-- 'pending' is a column of the (materialised) input, so that "still pending" is a
			-- join condition: as a constant it let the planner scan the partial index of all
			-- pending deliveries (webhook_deliveries_due) instead of probing the primary key
			-- once per attempt.
		), ep AS (
			SELECT e.merchant_id, e.environment, e.id, e.status, e.disabled_reason, e.failing_since
			FROM webhook_endpoints e
			WHERE (e.merchant_id, e.environment, e.id) IN (SELECT merchant_id, environment, endpoint_id FROM input)
			FOR SHARE
		), ok AS (
			SELECT i.* FROM input i
			JOIN ep ON ep.merchant_id = i.merchant_id AND ep.environment = i.environment AND ep.id = i.endpoint_id
			WHERE ep.status = i.ep_status AND ep.disabled_reason IS NOT DISTINCT FROM i.ep_reason
				AND ep.failing_since IS NOT DISTINCT FROM i.ep_failing_since
		), attempt AS (
			INSERT INTO webhook_attempts (merchant_id, environment, delivery_id, attempt,
				endpoint_id, event_id, started_at, latency_ms, status_code, response_excerpt, error)
			SELECT merchant_id, environment, delivery_id, attempt, endpoint_id, event_id, started_at,
				latency_ms, status_code, response_excerpt, error
			FROM ok
			-- a late outcome replaces the placeholder of an attempt the next claim found
			-- interrupted (webhooks.InterruptedError)
			ON CONFLICT (merchant_id, environment, delivery_id, attempt) DO UPDATE SET started_at = EXCLUDED.started_at,
				latency_ms = EXCLUDED.latency_ms, status_code = EXCLUDED.status_code,
				response_excerpt = EXCLUDED.response_excerpt, error = EXCLUDED.error
			WHERE webhook_attempts.error = $18
		), delivery AS (
			UPDATE webhook_deliveries d SET status = ok.next_status, next_attempt_at = ok.next_attempt_at,
				completed_at = ok.completed_at
			FROM ok
			WHERE d.merchant_id = ok.merchant_id AND d.environment = ok.environment AND d.id = ok.delivery_id
				AND d.attempts = ok.attempt AND d.status = ok.pending
		)
		SELECT delivery_id, attempt FROM ok`,
		pq.StringArray(merchants), pq.StringArray(envs), pq.StringArray(endpoints), pq.StringArray(statuses),
		pq.GenericArray{A: reasons}, pq.GenericArray{A: failing},
		pq.StringArray(deliveries), pq.Int64Array(attempts), pq.StringArray(eventIDs), pq.StringArray(started),
		pq.Int64Array(latencies), pq.GenericArray{A: codes}, pq.StringArray(excerpts),
		pq.GenericArray{A: errs}, pq.StringArray(nextStatus), pq.GenericArray{A: nextAt}, pq.GenericArray{A: completed},
		webhooks.InterruptedError)
	if err != nil {
		return nil, fmt.Errorf("webhook_attempts: record a group of %d: %w", n, err)
	}
	out := make(map[attemptKey]bool, len(rows))
	for _, r := range rows {
		out[attemptKey{r.DeliveryID, r.Attempt}] = true
	}
	return out, nil
}
