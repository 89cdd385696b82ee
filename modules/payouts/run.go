package payouts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/ports"
)

// batch is how many scopes, sends or arrivals one unit of work handles.
const batch = 100

// Deps are what the payouts need; every field but Rails is required. An environment without a
// rail gets no payouts.
type Deps struct {
	UoW    ports.UnitOfWorkOf[Tx]
	Store  Store
	Ledger ledger.Store
	Rails  map[core.Environment]ports.PayoutRail
	Clocks ports.Clocks
	Wall   core.Clock
}

// Service runs the daily payouts (a ports.DueProcessor with NextDue, so a test clock advance
// runs them at each midnight it crosses, in time order with the rest) and reads payouts.
type Service struct {
	d    Deps
	envs []core.Environment
}

var _ ports.DueProcessor = (*Service)(nil)

// NewService checks d.
func NewService(d Deps) (*Service, error) {
	if d.UoW == nil || d.Store == nil || d.Ledger == nil || d.Clocks == nil || d.Wall == nil {
		return nil, errors.New("payouts: the unit of work, the stores and the clocks are required")
	}
	s := &Service{d: d}
	for env, r := range d.Rails {
		if r != nil {
			s.envs = append(s.envs, env)
		}
	}
	slices.Sort(s.envs)
	return s, nil
}

// Enabled reports whether payouts run in env (it has a rail).
func (s *Service) Enabled(env core.Environment) bool { return slices.Contains(s.envs, env) }

// ProcessDue does every payout step due by until, in order: the runs (one per scope whose
// available balance changed before the last midnight ≤ until: a payout per currency with a
// positive available balance, dated that midnight), the sends of recorded payouts (the rail
// called with no transaction open, then the acceptance written), and the arrivals (pending →
// paid on the arrival date). It returns how many steps it did.
func (s *Service) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	if len(s.envs) == 0 {
		return 0, nil
	}
	n, err := s.run(ctx, scope, until)
	if err != nil {
		return n, err
	}
	m, err := s.send(ctx, scope)
	n += m
	if err != nil {
		return n, err
	}
	m, err = s.arrive(ctx, scope, until)
	return n + m, err
}

// run creates the payouts due by until, one unit of work per batch of scopes.
func (s *Service) run(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	for {
		n := 0
		var made []*Payout
		err := s.d.UoW.Do(ctx, func(ctx context.Context, tx Tx) error {
			n, made = 0, nil // Do may run this again
			dues, err := ledger.ClaimPayoutDue(ctx, tx, scope, s.envs, until, batch)
			if err != nil {
				return err
			}
			for _, d := range dues {
				ps, err := s.runScope(ctx, tx, d)
				if err != nil {
					return err
				}
				made = append(made, ps...)
			}
			n = len(dues)
			return nil
		})
		total += n
		if err != nil {
			return total, err
		}
		// Sent at once, with no transaction open; a payout whose send fails stays unsent and
		// is sent by the next pass (send).
		_, _ = s.sendAll(ctx, made)
		if n < batch {
			return total, nil
		}
	}
}

// runScope pays out every currency of d's scope with a positive available balance and
// returns the payouts it recorded.
func (s *Service) runScope(ctx context.Context, tx Tx, d ledger.PayoutDue) ([]*Payout, error) {
	at := d.RunAt()
	avail, err := ledger.LockAvailable(ctx, tx, d.Scope)
	if err != nil {
		return nil, err
	}
	var made []*Payout
	curs := make([]core.Currency, 0, len(avail))
	for c := range avail {
		curs = append(curs, c)
	}
	sort.Slice(curs, func(i, j int) bool { return curs[i] < curs[j] })
	var evs []core.Event
	for _, c := range curs {
		if avail[c] <= 0 {
			continue // nothing to pay out; a negative balance waits for payments
		}
		p := newPayout(d.Scope, c, avail[c], at)
		t, err := ledger.PostPayout(ctx, tx, ledger.PayoutFacts{Scope: d.Scope, PayoutID: p.id, Currency: c, Amount: p.amount, At: at})
		if err != nil {
			return nil, fmt.Errorf("payouts: %s: %w", p.id, err)
		}
		p.transactionID = t.ID()
		if err := tx.Payouts().Insert(ctx, p); err != nil {
			return nil, err
		}
		evs = append(evs, core.NewEvent(EventPayoutCreated, d.Scope, at, PayoutEvent{Payout: p}))
		made = append(made, p)
	}
	if err := ledger.ClearPayoutDue(ctx, tx, d.Scope); err != nil {
		return nil, err
	}
	return made, tx.Outbox().Add(ctx, evs...)
}

// send hands recorded payouts to their rail (no transaction open; the payout's id is the
// idempotency key) and writes each acceptance.
func (s *Service) send(ctx context.Context, scope *core.Scope) (int, error) {
	total := 0
	for {
		n, more, err := s.sendBatch(ctx, scope)
		total += n
		if err != nil || !more || n == 0 {
			return total, err
		}
	}
}

// sendBatch sends up to batch unsent payouts; more reports a full batch (more may wait).
func (s *Service) sendBatch(ctx context.Context, scope *core.Scope) (n int, more bool, err error) {
	ps, err := s.d.Store.Unsent(ctx, scope, s.envs, batch)
	if err != nil {
		return 0, false, err
	}
	n, err = s.sendAll(ctx, ps)
	return n, len(ps) == batch, err
}

// sendAll asks the rail for each payout of ps (no transaction open; the payout's id is the
// idempotency key, so a payout sent before a crash is the same transfer when sent again), then
// writes the acceptances in one unit of work. It returns how many were accepted.
func (s *Service) sendAll(ctx context.Context, ps []*Payout) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	refs := make(map[*Payout]string, len(ps))
	var failures []error
	for _, p := range ps {
		res, err := s.d.Rails[p.scope.Env].Send(ctx, ports.PayoutRequest{Scope: p.scope, IdempotencyKey: p.id, Amount: p.amount,
			Currency: p.currency, ArrivalDate: p.arrivalDate})
		if err != nil {
			failures = append(failures, fmt.Errorf("payouts: send %s: %w", p.id, err))
			continue
		}
		refs[p] = res.RailRef
	}
	n := 0
	err := s.d.UoW.Do(ctx, func(ctx context.Context, tx Tx) error {
		n = 0
		for _, p := range ps {
			ref, ok := refs[p]
			if !ok {
				continue
			}
			lp, err := tx.Payouts().Lock(ctx, p.scope, p.id)
			if err != nil {
				return err
			}
			if err := lp.markSent(ref, s.d.Wall.Now()); err != nil {
				return err
			}
			if lp.changed {
				if err := tx.Payouts().Save(ctx, lp); err != nil {
					return err
				}
			}
			n++
		}
		return nil
	})
	if err != nil {
		failures = append(failures, err)
		n = 0
	}
	return n, errors.Join(failures...)
}

// arrive marks the payouts that arrived by until paid: their amount leaves the payouts in
// transit, and payout.paid is written, dated the arrival.
func (s *Service) arrive(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := s.d.UoW.Do(ctx, func(ctx context.Context, tx Tx) error {
			n = 0
			ps, err := tx.Payouts().ClaimArrived(ctx, scope, until, batch)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if err := p.pay(); err != nil {
					return err
				}
				if err := tx.Payouts().Save(ctx, p); err != nil {
					return err
				}
				if err := ledger.PostPayoutPaid(ctx, tx, ledger.PayoutFacts{Scope: p.scope, PayoutID: p.id, Currency: p.currency,
					Amount: p.amount, At: p.arrivalDate, TransactionID: p.transactionID}); err != nil {
					return err
				}
				if err := tx.Outbox().Add(ctx, core.NewEvent(EventPayoutPaid, p.scope, p.arrivalDate, PayoutEvent{Payout: p})); err != nil {
					return err
				}
			}
			n = len(ps)
			return nil
		})
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}

// NextDue is the scope's next payout step at or before until: its next run (the first
// midnight after its available balance changed), a payout left unsent (a send that failed, or
// a process that died between recording and sending it), or the next arrival. A test clock
// advance therefore sends what is left unsent in its scope itself, not only the background
// loop.
func (s *Service) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	if !s.Enabled(scope.Env) {
		return time.Time{}, false, nil
	}
	var next time.Time
	found := false
	changed, ok, err := s.d.Ledger.PayoutChangedAt(ctx, scope)
	if err != nil {
		return time.Time{}, false, err
	}
	if ok {
		if at := ledger.NextMidnight(changed); !at.After(until) {
			next, found = at, true
		}
	}
	arr, ok, err := s.d.Store.NextStep(ctx, scope, until)
	if err != nil {
		return time.Time{}, false, err
	}
	if ok && (!found || arr.Before(next)) {
		next, found = arr, true
	}
	return next, found, nil
}

// Schedule tells the balance page whether payouts run in scope and when the next run is.
func (s *Service) Schedule(ctx context.Context, scope core.Scope) (bool, *time.Time, string, error) {
	if !s.Enabled(scope.Env) {
		return false, nil, "Live payouts need a live payout adapter, and this server has none configured: no payouts are created.", nil
	}
	now, err := s.d.Clocks.Now(ctx, scope)
	if err != nil {
		return false, nil, "", err
	}
	next := ledger.NextMidnight(now)
	return true, &next, "", nil
}

// Payouts lists scope's payouts, newest first.
func (s *Service) Payouts(ctx context.Context, scope core.Scope, q core.ListQuery) (core.Page[*Payout], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Payout]{}, err
	}
	page, err := s.d.Store.List(ctx, scope, q)
	if errors.Is(err, ErrUnknownCursor) {
		return page, q.UnknownCursor()
	}
	return page, err
}

// Payout reads one payout; an unknown id, or one of another scope, is 404 payout_not_found.
func (s *Service) Payout(ctx context.Context, scope core.Scope, id string) (*Payout, error) {
	p, err := s.d.Store.Get(ctx, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrPayoutNotFound
	}
	return p, err
}
