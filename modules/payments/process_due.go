package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Settlements gives the outcome of a delayed (processing) charge; ports.Processor
// implements it.
type Settlements interface {
	Settle(ctx context.Context, processorRef string, now time.Time) (ports.ChargeResult, error)
}

// SettleRetryDelay is how long a settlement waits before it is asked again when the processor
// could not answer.
const SettleRetryDelay = time.Minute

// dueBatch is how many due payments one sweep transaction claims.
const dueBatch = 100

// Sweeper is the background work of payments (a ports.DueProcessor): SEPA settlement and the
// opening of announced disputes. Both kinds of work run in one pass ordered by their due time,
// so a test clock advance (D12) produces them, and their events, in time order.
type Sweeper struct {
	store    DueStore
	settle   Settlements
	sessions SessionEvents
}

var _ ports.DueProcessor = (*Sweeper)(nil)

// NewSweeper returns the sweeper; sessions gives the subjects of the session events.
func NewSweeper(store DueStore, settle Settlements, sessions SessionEvents) *Sweeper {
	return &Sweeper{store: store, settle: settle, sessions: sessions}
}

// ProcessDue handles every payment with work due at or before until, earliest first, in
// batches claimed with FOR UPDATE SKIP LOCKED (several processes may sweep together; each
// payment changes exactly once):
//
//   - processing, settles_at ≤ until: the processor's Settle decides. succeeded →
//     payment_intent.succeeded (the payment) and checkout.session.async_payment_succeeded
//     (the session with its payment), and the receipt is queued (MailReceipt); failed (failure_code and
//     failure_message from the processor) → payment_intent.payment_failed and
//     checkout.session.async_payment_failed. Still processing → it waits for the processor's
//     new settlement time. A processor error postpones the payment by SettleRetryDelay
//     past until and is returned (joined) after the sweep.
//   - succeeded or partially refunded, dispute_opens_at ≤ until, no dispute yet → disputed
//     with a dp_ dispute (needs_response) and charge.dispute.created (the dispute).
//
// Events are stamped with the time the change was due, as session expiry is. It returns how
// many payments changed state.
func (s *Sweeper) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	var failures []error
	for {
		changed := 0
		var postponed []error
		claimed, err := s.store.ClaimDue(ctx, scope, until, dueBatch, func(rec *Record) (DueChange, error) {
			h, err := s.handle(ctx, rec, until)
			if err != nil {
				return DueChange{}, err
			}
			if h.postponed != nil {
				postponed = append(postponed, h.postponed)
			}
			if h.moved {
				changed++
			}
			return h.change, nil
		})
		if err != nil {
			return total, errors.Join(append(failures, err)...)
		}
		failures = append(failures, postponed...) // only once the batch committed
		total += changed
		// Every claimed payment leaves with its next due time after until (or none), so a
		// short batch means nothing due is left unlocked.
		if claimed < dueBatch {
			return total, errors.Join(failures...)
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// NextDue returns when the scope's next payment work falls due (at most until), so that a
// test clock advance can interleave it in time order with other modules' work (D12).
func (s *Sweeper) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	return s.store.NextDue(ctx, scope, until)
}

// handled is what handling one claimed payment decided.
type handled struct {
	change DueChange
	// moved reports a state change.
	moved bool
	// postponed is the processor error that postponed a settlement (the postponement itself
	// is written).
	postponed error
}

// handle decides one claimed payment. An error fails the whole batch (nothing is written).
func (s *Sweeper) handle(ctx context.Context, rec *Record, until time.Time) (handled, error) {
	p := rec.Payment
	switch {
	case p.Status() == StatusProcessing && rec.SettlesAt != nil && !rec.SettlesAt.After(until):
		return s.settleOne(ctx, rec, until)
	case (p.Status() == StatusSucceeded || p.Status() == StatusPartiallyRefunded) &&
		rec.DisputeOpensAt != nil && !rec.DisputeOpensAt.After(until):
		at := *rec.DisputeOpensAt
		d, err := OpenDisputeOn(p, rec.DisputeReason, at)
		if err != nil {
			return handled{}, fmt.Errorf("payments: dispute %s: %w", p.ID(), err)
		}
		return handled{moved: true, change: DueChange{Dispute: d, Events: []core.Event{
			core.NewEvent(EventChargeDisputeCreated, p.Scope(), at, DisputeEvent{Dispute: d}),
		}}}, nil
	}
	return handled{}, nil // not due after all (storage and the rule disagree): leave it
}

func (s *Sweeper) settleOne(ctx context.Context, rec *Record, until time.Time) (handled, error) {
	p := rec.Payment
	at := *rec.SettlesAt
	postpone := func(cause error) (handled, error) {
		next := until.Add(SettleRetryDelay)
		rec.SettlesAt = &next
		return handled{postponed: fmt.Errorf("payments: settle %s: %w", p.ID(), cause)}, nil
	}
	res, err := s.settle.Settle(ctx, rec.ProcessorRef, until)
	if err != nil {
		return postpone(err)
	}
	var evs []core.Event
	var sessionEvent core.EventType
	switch res.Outcome {
	case ports.OutcomeProcessing:
		if res.SettlesAt == nil || !res.SettlesAt.After(until) {
			return postpone(errors.New("the processor reports the charge still processing past its settlement time"))
		}
		next := res.SettlesAt.UTC()
		rec.SettlesAt = &next
		return handled{}, nil
	case ports.OutcomeSucceeded:
		if err := p.Succeed(); err != nil {
			return handled{}, err
		}
		evs = append(evs, core.NewEvent(EventPaymentIntentSucceeded, p.Scope(), at, PaymentEvent{Payment: p}))
		sessionEvent = EventCheckoutSessionAsyncPaymentSucceeded
	case ports.OutcomeFailed:
		msg := res.FailureMessage
		if msg == "" {
			msg = "The bank declined the debit."
		}
		code := res.DeclineCode
		if code == "" {
			code = ports.DeclineGenericDecline
		}
		if err := p.Fail(code, msg); err != nil {
			return handled{}, err
		}
		evs = append(evs, core.NewEvent(EventPaymentIntentPaymentFailed, p.Scope(), at, PaymentEvent{Payment: p}))
		sessionEvent = EventCheckoutSessionAsyncPaymentFailed
	default:
		return postpone(fmt.Errorf("unexpected outcome %q", res.Outcome))
	}
	if sid := p.SessionID(); sid != nil {
		// A session that cannot be read (a database error) fails the batch: the transition is
		// never written without its events.
		subject, err := s.sessions.SessionEventWithPayment(ctx, p.Scope(), *sid, p)
		if err != nil {
			return handled{}, fmt.Errorf("payments: settle %s: read session: %w", p.ID(), err)
		}
		evs = append(evs, core.NewEvent(sessionEvent, p.Scope(), at, subject))
	}
	return handled{moved: true, change: DueChange{Events: evs, Mail: receiptOnSuccess(p, at)}}, nil
}
