package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// DisputeStore reads disputes outside any unit of work: the due ones for the sweep, and one or
// a list for the dashboard. Every read is confined to one scope, except ListDue without one.
type DisputeStore interface {
	// ListDue reads, without locking, up to limit disputes with DueAt ≤ until, earliest
	// first. With scope nil it covers live disputes and test disputes of merchants whose test
	// clock is not frozen; with a scope only that scope.
	ListDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]*Dispute, error)
	// NextDue returns the earliest due time ≤ until among the scope's disputes.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (at time.Time, ok bool, err error)
	// Get reads one dispute (ErrNoDispute when the scope has none with that id).
	Get(ctx context.Context, scope core.Scope, id string) (*Dispute, error)
	// OfPayment reads the dispute of a payment (ErrNoDispute when it has none).
	OfPayment(ctx context.Context, scope core.Scope, paymentID string) (*Dispute, error)
	// List reads up to limit disputes of the scope, those that need a response first
	// (earliest deadline first), then the others newest first, continuing after the dispute
	// `after` ("" for the first page; one that is not a dispute of the scope answers
	// ErrUnknownCursor); more reports whether more follow.
	List(ctx context.Context, scope core.Scope, after string, limit int) (ds []*Dispute, more bool, err error)
}

// Disputes runs the dispute lifecycle (D16): the merchant's evidence (SaveEvidence) and the
// sweep that closes due disputes (ProcessDue, a ports.DueProcessor with NextDue, registered
// with the scheduler so that the background loop and a test clock advance both run it, in
// time order with the other modules' work).
type Disputes struct {
	store  DisputeStore
	uow    ports.UnitOfWorkOf[Tx]
	clocks ports.Clocks
	decide func(*Dispute) DisputeStatus
}

var _ ports.DueProcessor = (*Disputes)(nil)

// NewDisputes returns the dispute lifecycle over its store, unit of work and clocks. The
// bank's decision on a due dispute is the sandbox's (SandboxOutcome): disputes open only on
// payments of an environment with a processor, and the test environment's is the sandbox.
func NewDisputes(store DisputeStore, uow ports.UnitOfWorkOf[Tx], clocks ports.Clocks) (*Disputes, error) {
	if store == nil || uow == nil || clocks == nil {
		return nil, errors.New("payments: disputes need their store, a unit of work and the clocks")
	}
	return &Disputes{store: store, uow: uow, clocks: clocks, decide: SandboxOutcome}, nil
}

// Get reads one dispute of scope; an unknown id, or one of another scope, is
// ErrDisputeNotFound.
func (s *Disputes) Get(ctx context.Context, scope core.Scope, id string) (*Dispute, error) {
	d, err := s.store.Get(ctx, scope, id)
	if errors.Is(err, ErrNoDispute) {
		return nil, ErrDisputeNotFound
	}
	return d, err
}

// OfPayment reads the dispute of a payment; nil when it has none.
func (s *Disputes) OfPayment(ctx context.Context, scope core.Scope, paymentID string) (*Dispute, error) {
	d, err := s.store.OfPayment(ctx, scope, paymentID)
	if errors.Is(err, ErrNoDispute) {
		return nil, nil
	}
	return d, err
}

// List reads a page of the scope's disputes, those that need a response first, after the
// dispute `after` ("" for the first page). A cursor that is not a dispute of the scope is a
// 400 on starting_after.
func (s *Disputes) List(ctx context.Context, scope core.Scope, after string, limit int) ([]*Dispute, bool, error) {
	ds, more, err := s.store.List(ctx, scope, after, limit)
	if errors.Is(err, ErrUnknownCursor) {
		return nil, false, core.ListQuery{StartingAfter: after}.UnknownCursor()
	}
	return ds, more, err
}

// Now is the scope's current time (the test clock in test mode).
func (s *Disputes) Now(ctx context.Context, scope core.Scope) (time.Time, error) {
	return s.clocks.Now(ctx, scope)
}

// EvidenceRequest is the merchant's answer to a dispute.
type EvidenceRequest struct {
	Scope     core.Scope
	DisputeID string
	Text      string
	// Submit sends the evidence to the bank (the dispute moves to under_review); without it
	// the text is saved as a draft and the dispute still needs a response.
	Submit bool
}

// SaveEvidence saves (and with Submit, submits) evidence for a dispute at the scope's time, in
// one unit of work with charge.dispute.updated. Bad input is refused before anything is read
// (ErrEvidenceTooLong, ErrEvidenceMissing); an unknown dispute is ErrDisputeNotFound; one that
// no longer accepts evidence ErrDisputeNotAcceptingEvidence or ErrEvidenceWindowClosed. It
// returns the dispute as saved.
func (s *Disputes) SaveEvidence(ctx context.Context, req EvidenceRequest) (*Dispute, error) {
	if err := ValidateEvidence(req.Text, req.Submit); err != nil {
		return nil, err
	}
	now, err := s.clocks.Now(ctx, req.Scope)
	if err != nil {
		return nil, err
	}
	var out *Dispute
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out = nil // Do may run this again
		d, err := tx.Disputes().Lock(ctx, req.Scope, req.DisputeID)
		if errors.Is(err, ErrNoDispute) {
			return ErrDisputeNotFound
		}
		if err != nil {
			return err
		}
		if _, err := d.SaveEvidence(req.Text, req.Submit, now); err != nil {
			return err
		}
		if err := tx.Disputes().Save(ctx, d); err != nil {
			return err
		}
		out = d
		return tx.Outbox().Add(ctx, core.NewEvent(EventChargeDisputeUpdated, d.Scope(), now, DisputeEvent{Dispute: d}))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ProcessDue closes every dispute due at or before until, earliest first, in rounds of
// dueBatch: a dispute that still needs a response at its evidence deadline is lost (past
// due); one under review is decided when its review ends (SandboxOutcome: won with
// winning_evidence, lost otherwise). Each round reads the due disputes, then in one unit of
// work locks those no other sweep holds (FOR UPDATE SKIP LOCKED), keeps the ones still due,
// and for each locks its payment, closes the dispute and moves the payment with it (won: back
// to its state before the dispute; lost: disputed for good), saves both and writes
// charge.dispute.closed, dated when the dispute was due. Several processes may sweep at once;
// each dispute closes exactly once. It returns how many disputes closed.
func (s *Disputes) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	until = until.Truncate(DuePrecision)
	total := 0
	for {
		ds, err := s.store.ListDue(ctx, scope, until, dueBatch)
		if err != nil || len(ds) == 0 {
			return total, err
		}
		closed := 0
		err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			closed = 0 // Do may run this again
			locked, err := tx.Disputes().LockDue(ctx, ds)
			if err != nil {
				return err
			}
			for _, d := range locked {
				at := d.DueAt()
				if at == nil || at.Truncate(DuePrecision).After(until) {
					continue // changed since it was read
				}
				rec, err := tx.Payments().Lock(ctx, d.Scope(), d.PaymentID())
				if err != nil {
					return fmt.Errorf("payments: dispute %s: %w", d.ID(), err)
				}
				if err := rec.CloseDispute(d, s.decide(d), *at); err != nil {
					return fmt.Errorf("payments: dispute %s: %w", d.ID(), err)
				}
				if err := savePayment(ctx, tx, rec); err != nil {
					return err
				}
				if err := tx.Disputes().Save(ctx, d); err != nil {
					return err
				}
				if d.Status() == DisputeWon {
					if err := postDisputeWon(ctx, tx, d, *at); err != nil {
						return err
					}
				}
				if err := tx.Outbox().Add(ctx, core.NewEvent(EventChargeDisputeClosed, d.Scope(), *at, DisputeEvent{Dispute: d})); err != nil {
					return err
				}
				closed++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += closed
		if len(ds) < dueBatch || closed == 0 {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// NextDue returns when the scope's next dispute work falls due (at most until), so that a
// test clock advance interleaves it in time order with other modules' work (D12).
func (s *Disputes) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	return s.store.NextDue(ctx, scope, until.Truncate(DuePrecision))
}
