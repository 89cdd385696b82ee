package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Message is one signed HTTP delivery as the Sender performs it. The sender signs Body with
// every secret of Secrets at Timestamp (D10: one v1 per active secret) and sets the headers
// Service-Signature, Service-Event-Id, Service-Event-Type, Service-Environment,
// Service-Delivery-Attempt and Content-Type: application/json.
type Message struct {
	URL         string
	Environment core.Environment // live deliveries may not reach private addresses
	EventID     string
	EventType   string
	Attempt     int // 1-based
	Body        []byte
	Secrets     []string
	Timestamp   time.Time
}

// Sender performs one delivery: POST Body to URL within Timeout, redirects not followed, and
// reports what happened. It never returns an error: a transport failure is Outcome.Err.
type Sender interface {
	Send(ctx context.Context, m Message) Outcome
}

// WorkerOptions tune a Worker; zero values take the defaults.
type WorkerOptions struct {
	Batch       int // deliveries (and events) taken per claim; default 128
	Concurrency int // deliveries sent (and recorded) in parallel; default 32
	// Lease is how long a claimed attempt is reserved; default 2 min. A claimed job may wait
	// for a free slot behind the sends in flight when it was claimed (at most Concurrency,
	// whichever earlier claims they came from) and the earlier jobs of its own claim, so the
	// last job of a claim is sent up to ceil(Batch/Concurrency) send timeouts (and recordings)
	// after the claim, which the default lease (2 min) covers with room to spare: more than
	// (ceil(Batch/Concurrency)+1) send timeouts (5 × 10 s with the defaults). A job that still
	// waits until its lease no longer covers a send (slow recordings) is not started; it is
	// claimed again when the lease ends, so another worker never sends it at the same time.
	// At least two send timeouts.
	Lease        time.Duration
	PollInterval time.Duration // longest sleep between rounds without a wake-up; default 5 s
	// Wake, when set, ends a sleep early: the Postgres adapter signals it on NOTIFY, which the
	// outbox writer sends with a new event a channel carries only when the fan-out queue was
	// empty (a busy worker finds the others by its next rounds),
	// and Redeliver and SendTestEvent send for the delivery they make due. Polling remains the
	// fallback.
	Wake <-chan struct{}
	Rand func() float64 // jitter source in [0, 1); default DefaultRand
	Log  *slog.Logger   // default slog.Default()
}

// Worker fans new outbox events out into deliveries and sends the due ones. Any number of
// workers, in one process or several, can share a database: events and deliveries are claimed
// with FOR UPDATE SKIP LOCKED and every attempt number is handed out once.
type Worker struct {
	store  Store
	sender Sender
	render Render
	clock  core.Clock
	o      WorkerOptions
}

// NewWorker returns a worker over store and sender, rendering each event's data.object with
// render for the channel of its delivery (merchant endpoints: core.ChannelMerchant); clock is
// the wall clock in production. A nil dependency is an error.
func NewWorker(store Store, sender Sender, render Render, clock core.Clock, o WorkerOptions) (*Worker, error) {
	switch {
	case store == nil:
		return nil, errors.New("webhooks: NewWorker: nil store")
	case sender == nil:
		return nil, errors.New("webhooks: NewWorker: nil sender")
	case render == nil:
		return nil, errors.New("webhooks: NewWorker: nil render")
	case clock == nil:
		return nil, errors.New("webhooks: NewWorker: nil clock")
	}
	if o.Batch <= 0 {
		o.Batch = 128
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	o.Lease = max(o.Lease, 2*Timeout) // room for at least one send per claim
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Second
	}
	if o.Rand == nil {
		o.Rand = DefaultRand
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Worker{store: store, sender: sender, render: render, clock: clock, o: o}, nil
}

// minWait is the shortest sleep between rounds, so that a due delivery that cannot be taken
// right now (another worker holds it) is not polled in a tight loop.
const minWait = 250 * time.Millisecond

// settleWait is the first sleep after a round that found nothing following one that did work;
// it doubles with every further empty round up to PollInterval. The outbox writer notifies
// only when the fan-out queue was empty: an event queued while a worker was
// busy is found by the next round, and one whose transaction was still committing while that
// round ran is found by these short polls instead of waiting for PollInterval.
const settleWait = 50 * time.Millisecond

// Run works until ctx ends: a round, then, when the round did work, another round right away;
// else a sleep until the earliest pending delivery falls due, a wake-up, the end of a send, or
// the poll interval (settleWait after work, doubling up to PollInterval), whichever comes
// first. Run keeps one pool of sends for its whole life: a round starts its sends and returns
// without waiting for them, so a receiver that takes the whole send timeout holds one slot of
// the pool, not the deliveries that fall due meanwhile (another endpoint's retry, a new event).
// Sends in flight when ctx ends are finished and recorded before Run returns (each is bounded
// by the sender's timeout).
func (w *Worker) Run(ctx context.Context) error {
	p := w.newPool()
	defer p.wait()
	poll := w.o.PollInterval
	for {
		n, err := w.round(ctx, p)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil && n > 0 {
			poll = settleWait
			continue
		}
		wait := w.o.PollInterval
		if poll < wait {
			wait = poll
			poll = min(2*poll, w.o.PollInterval)
		}
		if err != nil {
			w.o.Log.Error("webhooks: delivery round failed", "error", err.Error())
			wait = w.o.PollInterval
		} else if at, ok, err := w.store.NextDue(ctx); err == nil && ok {
			if d := at.Sub(w.clock.Now()); d < wait {
				wait = max(d, min(minWait, wait))
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-w.o.Wake:
		case <-p.ended: // a recorded outcome may have scheduled a retry before wait ends
		case <-t.C:
		}
		t.Stop()
	}
}

// RunOnce fans out the waiting events and sends the deliveries due now, batch after batch,
// until a claim finds fewer than Batch due deliveries and no event was waiting; it returns how
// many attempts it made once all of them are recorded (Run does not wait: see round).
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	p := w.newPool()
	defer p.wait()
	return w.round(ctx, p)
}

// pool holds the sends in flight: at most Concurrency, each holding a slot from its start
// until its outcome is recorded.
type pool struct {
	slots chan struct{}
	wg    sync.WaitGroup
	// ended receives (without blocking the send that ends, so at most one is kept) when a
	// send's outcome has been recorded.
	ended chan struct{}
}

func (w *Worker) newPool() *pool {
	return &pool{slots: make(chan struct{}, w.o.Concurrency), ended: make(chan struct{}, 1)}
}

// start runs send on a goroutine of its own once a slot is free; it blocks while all
// Concurrency slots are taken.
func (p *pool) start(send func()) {
	p.slots <- struct{}{}
	p.wg.Add(1)
	go func() {
		defer func() {
			<-p.slots
			p.wg.Done()
			select {
			case p.ended <- struct{}{}:
			default:
			}
		}()
		send()
	}()
}

// wait returns when every send started has ended.
func (p *pool) wait() { p.wg.Wait() }

// round fans out the waiting events and starts the sends of the deliveries due now on p,
// batch after batch, until a claim finds fewer than Batch due deliveries and no event was
// waiting; it returns how many attempts it started once the last of them has started, not
// when they have ended. Sending is a pipeline: up to Concurrency attempts are in flight, and
// the next claim (with the fan-out of the events that arrived meanwhile) is made as soon as
// the last job of the previous one has started. At a claim at most Concurrency sends are in
// flight whatever round started them, so a claimed job starts within ceil(Batch/Concurrency)
// send timeouts (and recordings) of its claim (see WorkerOptions.Lease).
func (w *Worker) round(ctx context.Context, p *pool) (int, error) {
	match := func(e *Endpoint, typ string) bool { return e.Subscribes(typ) }
	sent := 0
	for {
		fanned := 0
		for {
			n, err := w.store.FanOut(ctx, w.o.Batch, w.clock.Now(), match)
			if err != nil {
				return sent, err
			}
			fanned += n
			if n < w.o.Batch {
				break
			}
		}
		claimed := w.clock.Now()
		jobs, err := w.store.ClaimDue(ctx, claimed, w.o.Lease, w.o.Batch)
		if err != nil {
			return sent, err
		}
		// The last moment a job of this claim may start and still end within its lease. A job
		// that waited longer for a slot (receivers that all took the whole timeout, recordings
		// that took long) is not sent: its attempt number stays reserved and the delivery is
		// claimed again, by any worker, once the lease ends, so it is never sent twice at once.
		lastStart := claimed.Add(w.o.Lease - Timeout)
		for _, j := range jobs {
			p.start(func() {
				if w.clock.Now().After(lastStart) {
					w.o.Log.Warn("webhooks: a claimed attempt waited past its lease for a free slot; it is sent again when the lease ends",
						"delivery", j.DeliveryID, "attempt", j.Attempt)
					return
				}
				w.deliver(ctx, j)
			})
		}
		sent += len(jobs)
		if (len(jobs) < w.o.Batch && fanned == 0) || ctx.Err() != nil {
			return sent, ctx.Err()
		}
	}
}

// deliver sends one claimed attempt and records it. It detaches from ctx's cancellation: an
// attempt whose number is reserved is finished and recorded rather than abandoned to its
// lease.
func (w *Worker) deliver(ctx context.Context, j *Job) {
	ctx = context.WithoutCancel(ctx)
	started := w.clock.Now()
	var o Outcome
	body, err := w.body(j)
	switch {
	case err != nil:
		o = Outcome{Err: "encode envelope: " + err.Error()}
	case j.Installation != "" && j.Event.Scope.Env == core.EnvLive && CheckURL(j.Endpoint.URL(), core.EnvLive, Destinations{AllowPrivate: true}) != nil:
		// An app endpoint takes test events at http URLs; live events need https (D17).
		o = Outcome{Err: LiveNeedsHTTPSError}
	case j.Endpoint.SecretUnavailable():
		// Unsigned (or wrongly signed) deliveries would teach receivers to skip the check:
		// the attempt fails without a request, and later retries go out once the key is back.
		o = Outcome{Err: SecretUnavailableError}
	default:
		o = w.sender.Send(ctx, Message{
			URL: j.Endpoint.URL(), Environment: j.Event.Scope.Env, EventID: j.Event.ID,
			EventType: string(j.Event.Type), Attempt: j.Attempt, Body: body,
			Secrets: j.Endpoint.ActiveSecrets(started), Timestamp: started,
		})
	}
	o.Excerpt = Excerpt([]byte(o.Excerpt))
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var disabled *Endpoint // set when this attempt disabled the endpoint (by the last call of fn)
	now := w.clock.Now()
	err = w.store.RecordAttempt(rctx, j, Attempt{Number: j.Attempt, StartedAt: started, Outcome: o}, now, func(e *Endpoint) Next {
		disabled = nil
		if e.RecordOutcome(o, now) {
			disabled = e
		}
		return decide(j.Attempt, o, now, !e.Enabled(), w.o.Rand())
	})
	if err != nil {
		// The attempt's number stays reserved; the delivery becomes due again when its lease
		// ends and is retried under the next number.
		w.o.Log.Error("webhooks: record attempt", "delivery", j.DeliveryID, "attempt", j.Attempt, "error", err.Error())
		return
	}
	if disabled != nil {
		w.o.Log.Warn("webhooks: endpoint disabled", "endpoint", disabled.ID(), "merchant", disabled.Scope().MerchantID,
			"environment", string(disabled.Scope().Env), "reason", string(disabled.DisabledReason()))
	}
}

// LiveNeedsHTTPSError is the recorded failure of a live app event whose endpoint has an http
// URL: it is not sent.
const LiveNeedsHTTPSError = "not sent: live events go to https URLs only; this app endpoint's URL is http"

// body is the delivery body of j: to a merchant endpoint, the envelope with data.object
// rendered for the merchant channel; to an app endpoint, the app envelope (with the
// installation) rendered for the app channel. A test event is about the endpoint it is sent
// to and carries that object as it is.
func (w *Worker) body(j *Job) ([]byte, error) {
	ev := j.Event
	if j.Installation != "" {
		data, err := w.render(ev, core.ChannelApp)
		if err != nil {
			return nil, err
		}
		return AppEnvelope(ev, j.Installation, json.RawMessage(data))
	}
	if ev.Type == TestEventType {
		return Envelope(ev, ev.Object)
	}
	data, err := w.render(ev, core.ChannelMerchant)
	if err != nil {
		return nil, err
	}
	return Envelope(ev, json.RawMessage(data))
}
