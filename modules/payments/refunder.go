package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// RefundGrace is how old (wall clock, from the refund's start) a pending refund must be before
// the sweep resolves it: longer than a processor call and its commit, so that no call can still
// be under way for it.
const RefundGrace = CallTimeout + 10*time.Second

// refundPoint is the recovery point of a keyed refund request: "refund re_…", reached in the
// unit of work that records the refund, so that a retry after a crash resumes that refund
// instead of asking for a second one.
const refundPoint = "refund "

// RefunderDeps are what the Refunder needs; every field is required.
type RefunderDeps struct {
	UoW ports.UnitOfWorkOf[RefundTx]
	// Refunds reads refunds outside units of work (the pending ones the sweep resolves).
	Refunds RefundStore
	// Processors gives back charges, per environment.
	Processors map[core.Environment]ports.Refunder
	// Clocks is the scope's clock (a sandbox test clock, D12): the refund window is measured
	// on it and refunds and events are dated by it.
	Clocks ports.Clocks
	// Wall is the wall clock a pending refund's age is measured on.
	Wall core.Clock
}

// Refunder runs refunds (interface 3.2, D9, D16). A refund calls the processor, so it is an
// operation that calls out, in three steps with no transaction open between them:
//
//  1. Record: one unit of work locks the payment, checks the refund against it and against
//     the refunds still pending at the processor (Payment.CheckRefund: two refunds at the same
//     moment never exceed the captured amount), and inserts the refund pending. For a keyed
//     request its recovery point ("refund re_…") commits with it.
//  2. Call the processor with the refund's id as idempotency key, no connection held.
//  3. Apply, once: one unit of work locks the payment, then the refund; a refund still pending
//     is applied (Payment.ApplyRefund: amount_refunded, status, the fee reversed) and saved
//     with the payment, charge.refunded and checkout.session.refunded are added and the
//     refund receipt queued. A refund found resolved was applied by someone else.
//
// A crash after step 1 leaves the refund pending: the keyed retry resumes it from its recovery
// point, and the sweep (ProcessDue) resolves it by lookup. Either way the processor is asked
// with the same key, so the money moves once, and step 3 applies it once.
type Refunder struct {
	uow        ports.UnitOfWorkOf[RefundTx]
	refunds    RefundStore
	processors map[core.Environment]ports.Refunder
	clocks     ports.Clocks
	wall       core.Clock
}

var _ ports.DueProcessor = (*Refunder)(nil)

// NewRefunder checks d and returns the refunder.
func NewRefunder(d RefunderDeps) (*Refunder, error) {
	switch {
	case d.UoW == nil:
		return nil, errors.New("payments: refunder: the unit of work is required")
	case d.Refunds == nil:
		return nil, errors.New("payments: refunder: the refund store is required")
	case len(d.Processors) == 0:
		return nil, errors.New("payments: refunder: at least one processor is required")
	case d.Clocks == nil || d.Wall == nil:
		return nil, errors.New("payments: refunder: the clocks are required")
	}
	return &Refunder{uow: d.UoW, refunds: d.Refunds, processors: d.Processors, clocks: d.Clocks, wall: d.Wall}, nil
}

// RefundRequest asks for a refund of a payment.
type RefundRequest struct {
	Scope     core.Scope
	PaymentID string
	// Amount in minor units; nil refunds what remains.
	Amount *int64
	Reason RefundReason
}

// Refund refunds a payment and answers the refund once it is applied (succeeded), or failed
// when the processor refused it. An unknown payment (or one of another merchant or
// environment) is 404 payment_not_found; the refusals are CheckRefund's. A processor call
// that fails leaves the refund pending and answers the error: a keyed retry resumes it, and
// the sweep resolves it.
func (rf *Refunder) Refund(ctx context.Context, req RefundRequest) (*Refund, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return nil, err
	}
	if !req.Reason.Valid() {
		return nil, ErrRefundReasonInvalid
	}
	if req.Amount != nil && *req.Amount <= 0 {
		return nil, ErrRefundAmountInvalid
	}
	phases := ports.KeyPhasesFrom(ctx)
	id := ""
	if phases != nil && phases.Point() != "" {
		if !strings.HasPrefix(phases.Point(), refundPoint) {
			return nil, fmt.Errorf("payments: unknown recovery point %q", phases.Point())
		}
		id = strings.TrimPrefix(phases.Point(), refundPoint)
	}
	if id != "" {
		return rf.resume(ctx, req.Scope, id)
	}
	r, ref, err := rf.record(ctx, req, phases)
	if err != nil {
		return nil, err
	}
	res, err := rf.call(ctx, r, ref, false)
	if err != nil {
		return nil, err
	}
	return rf.apply(ctx, r, res)
}

// record is step 1: the refund checked and recorded pending under the payment's lock. It
// returns the refund and the processor's id of the refunded charge.
func (rf *Refunder) record(ctx context.Context, req RefundRequest, phases ports.KeyPhases) (*Refund, string, error) {
	now, err := rf.clocks.Now(ctx, req.Scope)
	if err != nil {
		return nil, "", err
	}
	wall := rf.wall.Now()
	var out *Refund
	var ref string
	err = rf.uow.Do(ctx, func(ctx context.Context, tx RefundTx) error {
		out, ref = nil, "" // Do may run this again
		rec, err := tx.Payments().Lock(ctx, req.Scope, req.PaymentID)
		if err != nil {
			return paymentNotFound(err, req.PaymentID)
		}
		reserved, err := tx.Refunds().Reserved(ctx, req.Scope, req.PaymentID)
		if err != nil {
			return err
		}
		if _, ok := rf.processors[req.Scope.Env]; !ok {
			// Nothing is recorded: no refund waits for a processor that is not there.
			return ErrRefundProcessorUnavailable
		}
		p := rec.Payment
		amount := p.AmountRefundable() - reserved
		if req.Amount != nil {
			amount = *req.Amount
		} else if amount <= 0 && p.AmountRefundable() > 0 {
			return ErrRefundExceedsCaptured.Msg("Nothing remains to be refunded: the rest of this charge is being refunded already.")
		}
		if err := p.CheckRefund(amount, reserved, now); err != nil {
			return err
		}
		r := NewRefund(p, amount, req.Reason, now, wall)
		if err := tx.Refunds().Insert(ctx, r); err != nil {
			return err
		}
		if phases != nil {
			if err := tx.RecoveryPoints().Reach(ctx, phases.Key(), refundPoint+r.ID()); err != nil {
				return err
			}
		}
		out, ref = r, rec.ProcessorRef
		return nil
	})
	return out, ref, err
}

// resume is steps 2 and 3 for a refund a keyed request recorded before it was cut: nothing
// when it is resolved already. The processor is asked with the refund's key, so a refund it
// made already is answered, not made again.
func (rf *Refunder) resume(ctx context.Context, scope core.Scope, id string) (*Refund, error) {
	r, err := rf.refunds.Get(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	if r.Status() != RefundPending {
		return r, nil
	}
	res, err := rf.call(ctx, r, "", false)
	if err != nil {
		return nil, err
	}
	return rf.apply(ctx, r, res)
}

// call asks the processor for r (step 2); ref is the processor's id of the charge ("" reads
// it). With lookup it first asks what became of the key (the sweep: the process that recorded
// it may have died before or after its call); a key the processor never received is then
// refunded now, with the same key, since the merchant asked for it and nothing was given back.
func (rf *Refunder) call(ctx context.Context, r *Refund, ref string, lookup bool) (ports.RefundResult, error) {
	proc, ok := rf.processors[r.Scope().Env]
	if !ok {
		return ports.RefundResult{}, fmt.Errorf("payments: no processor for %s", r.Scope().Env)
	}
	now, err := rf.clocks.Now(ctx, r.Scope())
	if err != nil {
		return ports.RefundResult{}, err
	}
	if lookup {
		res, err := proc.LookupRefund(ctx, r.Scope(), r.ID(), now)
		if !errors.Is(err, ports.ErrRefundUnknown) {
			return res, err
		}
	}
	if ref == "" {
		if ref, err = rf.processorRef(ctx, r); err != nil {
			return ports.RefundResult{}, err
		}
	}
	callCtx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	return proc.Refund(callCtx, ports.RefundRequest{Scope: r.Scope(), ProcessorRef: ref, Amount: r.Amount(),
		Currency: r.Currency(), IdempotencyKey: r.ID()}, now)
}

// processorRef reads the processor's id of the refunded charge (a short read-only unit of
// work; it commits before the call).
func (rf *Refunder) processorRef(ctx context.Context, r *Refund) (string, error) {
	var ref string
	err := rf.uow.Do(ctx, func(ctx context.Context, tx RefundTx) error {
		rec, err := tx.Payments().Lock(ctx, r.Scope(), r.PaymentID())
		if err != nil {
			return err
		}
		ref = rec.ProcessorRef
		return nil
	})
	return ref, err
}

// apply is step 3, exactly once.
func (rf *Refunder) apply(ctx context.Context, r *Refund, res ports.RefundResult) (*Refund, error) {
	now, err := rf.clocks.Now(ctx, r.Scope())
	if err != nil {
		return nil, err
	}
	var out *Refund
	err = rf.uow.Do(ctx, func(ctx context.Context, tx RefundTx) error {
		out = nil
		rec, err := tx.Payments().Lock(ctx, r.Scope(), r.PaymentID()) // 1st lock: the payment
		if err != nil {
			return err
		}
		lr, err := tx.Refunds().Lock(ctx, r.Scope(), r.ID()) // 2nd: the refund
		if err != nil {
			return err
		}
		out = lr
		if lr.Status() != RefundPending {
			return nil // applied already
		}
		if res.Outcome != ports.RefundSucceeded {
			if err := lr.Fail(res.FailureCode, res.FailureMessage); err != nil {
				return err
			}
			return tx.Refunds().Save(ctx, lr)
		}
		o, err := rec.ApplyRefund(lr.Amount())
		if err != nil {
			return err
		}
		if err := lr.Succeed(res.ProcessorRef, o.FeeReversed); err != nil {
			return err
		}
		if err := savePayment(ctx, tx, rec); err != nil {
			return err
		}
		if err := tx.Refunds().Save(ctx, lr); err != nil {
			return err
		}
		if err := postRefund(ctx, tx, lr, now); err != nil {
			return err
		}
		p := rec.Payment
		evs := []core.Event{core.NewEvent(EventChargeRefunded, p.Scope(), now, RefundEvent{Refund: lr, Payment: p})}
		if p.SessionID() != nil { // the payment came from a checkout session
			evs = append(evs, core.NewEvent(EventCheckoutSessionRefunded, p.Scope(), now, SessionRefundEvent{Refund: lr, Payment: p}))
		}
		if err := tx.Outbox().Add(ctx, evs...); err != nil {
			return err
		}
		if p.Customer().Email == "" {
			return nil // nobody to tell
		}
		return tx.Mail().Enqueue(ctx, core.Mail{Kind: MailRefundReceipt, Scope: p.Scope(), SubjectID: lr.ID(), Created: now})
	})
	return out, err
}

// refundBatch is how many pending refunds one sweep pass reads.
const refundBatch = 100

// ProcessDue resolves the refunds left pending more than RefundGrace ago (wall clock; a test
// clock's advance does not move the grace): it asks the processor what became of each (and
// refunds with the same key one it never received), then applies the answer exactly once. It
// returns how many it resolved; the errors of single refunds are joined, those staying pending
// for the next pass.
func (rf *Refunder) ProcessDue(ctx context.Context, scope *core.Scope, _ time.Time) (int, error) {
	stale, err := rf.refunds.Stale(ctx, scope, rf.wall.Now().Add(-RefundGrace), refundBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	var failures []error
	for _, r := range stale {
		res, err := rf.call(ctx, r, "", true)
		if err == nil {
			_, err = rf.apply(ctx, r, res)
		}
		if err != nil {
			failures = append(failures, fmt.Errorf("payments: resolve refund %s: %w", r.ID(), err))
			continue
		}
		n++
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
	return n, errors.Join(failures...)
}

// Refunds lists the scope's refunds newest first (only paymentID's when set).
func (rf *Refunder) Refunds(ctx context.Context, scope core.Scope, q core.ListQuery, paymentID string) (core.Page[*Refund], error) {
	page, err := rf.refunds.List(ctx, scope, q, paymentID)
	if errors.Is(err, ErrRefundCursorUnknown) {
		return page, q.UnknownCursor()
	}
	return page, err
}

func paymentNotFound(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return core.NotFound("payment", "id", id)
	}
	return err
}
