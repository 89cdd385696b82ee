package billing

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// dueBatch is how many subscriptions one unit of work of the sweep claims.
const dueBatch = 100

// applyDue applies what is due on the locked sub at or before until, dated when it fell due,
// and writes it with its events. It reports whether anything changed.
func (s *Service) applyDue(ctx context.Context, tx Tx, sub *Subscription, until time.Time) (bool, error) {
	at, ok := sub.DueAt()
	if !ok || at.After(until) {
		return false, nil
	}
	ch, _, err := sub.ProcessDue(until)
	if err != nil || ch == (Change{}) {
		return false, err
	}
	if err := tx.Subscriptions().Save(ctx, sub); err != nil {
		return false, err
	}
	evs := changeEvents(ch, sub, at)
	if sub.Status() == StatusIncompleteExpired || ch.Deleted {
		// An expired or ended subscription's open invoice is voided with it.
		voided, err := s.voidLatest(ctx, tx, sub, at)
		if err != nil {
			return false, err
		}
		evs = append(evs, voided...)
	}
	return true, tx.Outbox().Add(ctx, evs...)
}

// voidLatest voids the subscription's latest invoice if it is still open.
func (s *Service) voidLatest(ctx context.Context, tx Tx, sub *Subscription, at time.Time) ([]core.Event, error) {
	inv := sub.LatestInvoice()
	if inv == nil || s.invoices == nil {
		return nil, nil
	}
	return s.invoices.VoidOpenInvoice(ctx, tx, sub.Scope(), *inv, at)
}

// ProcessDue implements ports.DueProcessor for subscriptions: an incomplete subscription
// expires 23 hours after creation, a trial gives its ending notice, a pending cancellation
// ends the subscription at its period end, each dated when it fell due, with its event. Each batch of at most a hundred, earliest
// first, is one unit of work that claims its rows with SKIP LOCKED, so several processes sweep
// together. With scope nil it covers live scopes and test scopes whose clock is not frozen;
// with a scope, only that scope (the test clock advance).
func (s *Service) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	for {
		claimed, changed := 0, 0
		err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			claimed, changed = 0, 0 // Do may run this again
			subs, err := tx.Subscriptions().ClaimDue(ctx, scope, until, dueBatch)
			if err != nil {
				return err
			}
			claimed = len(subs)
			for _, sub := range subs {
				ok, err := s.applyDue(ctx, tx, sub, until)
				if err != nil {
					return err
				}
				if ok {
					changed++
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += changed
		// A subscription takes one change per round, in due order, so a second change of the
		// same subscription (a trial's notice, then its cancellation) comes in a later round;
		// a round that changed nothing ends the sweep.
		if claimed == 0 || changed == 0 {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// NextDue is the earliest due time of the scope's subscriptions at or before until
// (scheduler.NextDuer), so a test clock advance interleaves them with other modules' work in
// time order.
func (s *Service) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	return s.store.NextDue(ctx, scope, until)
}
