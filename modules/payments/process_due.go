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

// dueBatch is how many due payments one sweep round reads and applies.
const dueBatch = 100

// Sweeper is the background work of payments (a ports.DueProcessor): SEPA settlement and the
// opening of announced disputes. Both kinds of work run in one pass ordered by their due time,
// so a test clock advance (D12) produces them, and their events, in time order.
type Sweeper struct {
	store   DueStore
	uow     ports.UnitOfWorkOf[Tx]
	settle  map[core.Environment]Settlements
	charger *Charger
	// rates converts the dispute fee of a payment whose fee kept no rate (nil: such a
	// dispute fails to open with ErrFeeRateMissing).
	rates ports.FXRates
}

// UseRates gives the sweeper the FX port for the dispute fee of payments whose fee was stored
// before rates were kept with it (the rate of the fee's rate day). It returns s.
func (s *Sweeper) UseRates(rates ports.FXRates) *Sweeper {
	s.rates = rates
	return s
}

var _ ports.DueProcessor = (*Sweeper)(nil)

// NewSweeper returns the sweeper. settle gives the processor of each environment (test → the
// sandbox): a payment is settled by the processor of its own environment, and one of an
// environment without a processor is postponed (SettleRetryDelay) with an error, never settled
// by another environment's processor. store lists the due payments; a round's decisions that
// concern the payment alone (a dispute, a postponement) are written in one unit of work of uow,
// and each settlement in a unit of work of its payable's owner, found through the charger's
// payable kinds (PayableOwner.ApplySettlement). store, uow and charger are required.
func NewSweeper(store DueStore, uow ports.UnitOfWorkOf[Tx], settle map[core.Environment]Settlements, charger *Charger) (*Sweeper, error) {
	if store == nil || uow == nil || charger == nil {
		return nil, errors.New("payments: the sweeper needs its store, a unit of work and the charger")
	}
	procs := make(map[core.Environment]Settlements, len(settle))
	for env, p := range settle {
		if p != nil {
			procs[env] = p
		}
	}
	return &Sweeper{store: store, uow: uow, settle: procs, charger: charger}, nil
}

// ErrNoSettlements: a processing payment of an environment that has no processor.
var ErrNoSettlements = errors.New("payments: no processor settles payments of this environment")

// ProcessDue handles every payment with work due at or before until (Record.DueAt),
// earliest first, in rounds of dueBatch:
//
//   - processing, settles_at ≤ until: the Settle of the processor of the payment's
//     environment decides. succeeded (funds available FundsDelay after settlement) →
//     payment_intent.succeeded (the payment), then the owner's events (checkout:
//     checkout.session.async_payment_succeeded), and the receipt is queued (MailReceipt);
//     failed (failure_code and failure_message from the processor) →
//     payment_intent.payment_failed, then the owner's (checkout.session.async_payment_failed).
//     Both are written in a unit of work of the payable's owner, which locks the payable
//     first, then the payment (PayableOwner.ApplySettlement). Still processing → it waits for the processor's
//     new settlement time. A processor error postpones the payment by SettleRetryDelay
//     past until and is returned (joined) after the sweep.
//   - succeeded or partially refunded, dispute_opens_at ≤ until, no dispute yet → disputed
//     with a dp_ dispute (needs_response) and charge.dispute.created (the dispute).
//
// Each round reads the due payments, decides each one with every outside call made (the
// processor) while no transaction is open, and then writes the decisions: those that concern
// the payment alone in one unit of work that locks the payments (PaymentRepository.LockDue:
// FOR UPDATE SKIP LOCKED), keeps only the decisions taken on the state it finds, and writes
// each kept one (the payment with Save, its dispute, its events, its receipt); each
// settlement in its owner's unit of work, with the same checks (several processes may sweep
// together; each payment changes exactly once). Every written decision moves the payment's due time past
// until or changes its state, so each round makes progress; a round that writes nothing ends
// the sweep (the rest is held by another sweep, which does it).
//
// Events are stamped with the time the change was due, as session expiry is. It returns how
// many payments changed state.
func (s *Sweeper) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	until = until.Truncate(DuePrecision)
	total := 0
	var failures []error
	for {
		recs, err := s.store.ListDue(ctx, scope, until, dueBatch)
		if err != nil {
			return total, errors.Join(append(failures, err)...)
		}
		if len(recs) == 0 {
			return total, errors.Join(failures...)
		}
		plans := make(map[string]plan, len(recs))
		for _, rec := range recs {
			if !rec.IsDue(until) {
				return total, errors.Join(append(failures,
					fmt.Errorf("payments: storage lists %s as due by %s, the rule does not (due %v)", rec.Payment.ID(), until, rec.DueAt()))...)
			}
			read := rec.state()
			h, err := s.handle(ctx, rec, until)
			if err != nil {
				return total, errors.Join(append(failures, err)...)
			}
			plans[rec.Payment.ID()] = plan{read: read, handled: h}
		}
		var changed, written int
		var postponed []error
		var alone []*Record
		for _, rec := range recs {
			if !plans[rec.Payment.ID()].owned {
				alone = append(alone, rec)
			}
		}
		err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			changed, written, postponed = 0, 0, nil // Do may run this again
			locked, err := tx.Payments().LockDue(ctx, alone)
			if err != nil {
				return err
			}
			for _, l := range locked {
				pl, ok := plans[l.Payment.ID()]
				if !ok || l.state() != pl.read {
					continue // changed since it was read: another sweep decided it
				}
				if err := pl.change.write(ctx, tx); err != nil {
					return err
				}
				written++
				if pl.postponed != nil {
					postponed = append(postponed, pl.postponed)
				}
				if pl.moved {
					changed++
				}
			}
			return nil
		})
		if err != nil {
			return total, errors.Join(append(failures, err)...)
		}
		for _, rec := range recs {
			pl := plans[rec.Payment.ID()]
			if !pl.owned {
				continue
			}
			done, err := s.settleOwned(ctx, rec, pl)
			if err != nil {
				return total + changed, errors.Join(append(append(failures, postponed...), err)...)
			}
			if done {
				written++
				changed++
			}
		}
		failures = append(failures, postponed...) // only once the round committed
		total += changed
		if len(recs) < dueBatch || written == 0 {
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
	return s.store.NextDue(ctx, scope, until.Truncate(DuePrecision))
}

// dueState is what a decision of the sweep depends on; a payment found in another state
// under the lock was changed after it was read, and the decision is dropped.
type dueState struct {
	status, beforeDispute Status
	disputeLost           bool
	amountRefunded        int64
	processorRef          string
	settlesAt, opensAt    time.Time
	disputeID             string
}

func (r *Record) state() dueState {
	var st dueState
	st.status, st.beforeDispute = r.Payment.Status(), r.Payment.StatusBeforeDispute()
	st.disputeLost, st.amountRefunded = r.Payment.DisputeLost(), r.Payment.AmountRefunded()
	st.processorRef, st.disputeID = r.ProcessorRef, r.DisputeID()
	if at := r.SettlesAt(); at != nil {
		st.settlesAt = at.UTC()
	}
	if r.DisputeOpensAt != nil {
		st.opensAt = r.DisputeOpensAt.UTC()
	}
	return st
}

// plan is the decision on one payment and the state it was taken on.
type plan struct {
	read dueState
	handled
}

// dueChange is what handling a due payment writes.
type dueChange struct {
	// record is the payment, changed by its transitions (Record.Changes says what).
	record *Record
	// dispute is a dispute opened on the payment (nil: none), for its own repository.
	dispute *Dispute
	// events report the change, in order.
	events []core.Event
	// mail is queued with it (the receipt of a payment that succeeded).
	mail []core.Mail
}

// write persists the change in the unit of work tx: the payment (what it reports changed),
// the dispute opened on it with its ledger postings, then its events, then its mail.
func (c dueChange) write(ctx context.Context, tx Tx) error {
	if err := savePayment(ctx, tx, c.record); err != nil {
		return err
	}
	if c.dispute != nil {
		if err := tx.Disputes().Insert(ctx, c.dispute); err != nil {
			return err
		}
		if err := postDispute(ctx, tx, c.dispute); err != nil {
			return err
		}
	}
	if err := tx.Outbox().Add(ctx, c.events...); err != nil {
		return err
	}
	return tx.Mail().Enqueue(ctx, c.mail...)
}

// settleOwned writes the settlement pl of the payment rec (read outside any transaction) in one
// unit of work of its payable's owner: the payable locked first, then the payment (skipped
// when another sweep holds it or changed it since it was read), the payment's new state and
// its events, the owner's side and events (ApplySettlement), the receipt. done reports whether
// it wrote.
func (s *Sweeper) settleOwned(ctx context.Context, rec *Record, pl plan) (done bool, err error) {
	p := rec.Payment
	k, err := s.charger.kinds.of(p.PayableKind())
	if err != nil {
		return false, fmt.Errorf("payments: settle %s: %w", p.ID(), err)
	}
	err = k.bound.do(ctx, func(ctx context.Context, tx Tx, o owner) error {
		done = false // Do may run this again
		payable, err := o.lock(ctx, p.Scope(), p.PayableID())
		if err != nil {
			return err
		}
		locked, err := tx.Payments().LockDue(ctx, []*Record{rec})
		if err != nil {
			return err
		}
		if len(locked) != 1 || locked[0].state() != pl.read {
			return nil // held or changed: another sweep decides it
		}
		c := pl.change
		if err := savePayment(ctx, tx, c.record); err != nil {
			return err
		}
		if c.record.Payment.Status() == StatusSucceeded { // settled: its funds enter the balance
			if err := postPayment(ctx, tx, c.record, pl.at); err != nil {
				return err
			}
		}
		if err := tx.Outbox().Add(ctx, c.events...); err != nil {
			return err
		}
		evs, err := o.applySettlement(ctx, payable, c.record.Payment, pl.at)
		if err != nil {
			return err
		}
		if err := tx.Outbox().Add(ctx, evs...); err != nil {
			return err
		}
		done = true
		return tx.Mail().Enqueue(ctx, c.mail...)
	})
	return done, err
}

// handled is what handling one due payment decided.
type handled struct {
	// owned: a settlement, written in the unit of work of the payable's owner (settleOwned).
	owned bool
	// at is when the settlement was due (the owner's events are stamped with it).
	at     time.Time
	change dueChange
	// moved reports a state change.
	moved bool
	// postponed is the processor error that postponed a settlement (the postponement itself
	// is written).
	postponed error
}

// handle decides one due payment, changing rec (a copy read outside any transaction) to its
// new state. An error fails the whole round (nothing is written).
func (s *Sweeper) handle(ctx context.Context, rec *Record, until time.Time) (handled, error) {
	if rec.Payment.Status() == StatusProcessing {
		return s.settleOne(ctx, rec, until)
	}
	return s.openDispute(ctx, rec)
}

// openDispute opens the announced dispute of a due succeeded or partially refunded payment:
// the payment moves to disputed, the dispute is stored with it, and charge.dispute.created
// reports it, dated when the dispute opened. The dispute fee is converted at the rate locked
// with the payment's fee; a fee stored before rates were kept takes the FX port's rate of the
// fee's rate day (read here, outside any transaction).
func (s *Sweeper) openDispute(ctx context.Context, rec *Record) (handled, error) {
	p := rec.Payment
	d, err := rec.OpenDispute()
	if errors.Is(err, ErrFeeRateMissing) && s.rates != nil {
		var r ports.Rate
		if r, err = s.rates.Rate(ctx, p.Fee().RateDate, "EUR", p.Currency()); err == nil {
			var exact string
			if exact, err = ExactDecimal(r.Value()); err == nil {
				d, err = rec.OpenDisputeAtRate(exact, r.Day)
			}
		}
	}
	if err != nil {
		return handled{}, fmt.Errorf("payments: dispute %s: %w", p.ID(), err)
	}
	return handled{moved: true, change: dueChange{record: rec, dispute: d, events: []core.Event{
		core.NewEvent(EventChargeDisputeCreated, p.Scope(), d.Created(), DisputeEvent{Dispute: d}),
	}}}, nil
}

func (s *Sweeper) settleOne(ctx context.Context, rec *Record, until time.Time) (handled, error) {
	p := rec.Payment
	at := *rec.SettlesAt()
	postpone := func(cause error) (handled, error) {
		if err := rec.Postpone(until.Add(SettleRetryDelay)); err != nil {
			return handled{}, err
		}
		return handled{change: dueChange{record: rec}, postponed: fmt.Errorf("payments: settle %s: %w", p.ID(), cause)}, nil
	}
	proc, ok := s.settle[p.Environment()]
	if !ok {
		return postpone(fmt.Errorf("%w (%s)", ErrNoSettlements, p.Environment()))
	}
	res, err := proc.Settle(ctx, rec.ProcessorRef, until)
	if err != nil {
		return postpone(err)
	}
	var evs []core.Event
	switch res.Outcome {
	case ports.OutcomeProcessing:
		if res.SettlesAt == nil || !res.SettlesAt.After(until) {
			return postpone(errors.New("the processor reports the charge still processing past its settlement time"))
		}
		if err := rec.Postpone(*res.SettlesAt); err != nil {
			return handled{}, err
		}
		return handled{change: dueChange{record: rec}}, nil
	case ports.OutcomeSucceeded:
		if err := rec.Settle(true, "", "", at); err != nil {
			return handled{}, err
		}
		evs = append(evs, core.NewEvent(EventPaymentIntentSucceeded, p.Scope(), at, PaymentEvent{Payment: p}))
	case ports.OutcomeFailed:
		msg := res.FailureMessage
		if msg == "" {
			msg = "The bank declined the debit."
		}
		code := res.DeclineCode
		if code == "" {
			code = ports.DeclineGenericDecline
		}
		if err := rec.Settle(false, code, msg, at); err != nil {
			return handled{}, err
		}
		evs = append(evs, core.NewEvent(EventPaymentIntentPaymentFailed, p.Scope(), at, PaymentEvent{Payment: p}))
	default:
		return postpone(fmt.Errorf("unexpected outcome %q", res.Outcome))
	}
	return handled{moved: true, owned: true, at: at, change: dueChange{record: rec, events: evs, mail: receiptOnSuccess(p, at)}}, nil
}
