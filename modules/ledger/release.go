package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// releaseBatch is how many releases one unit of work of the sweep claims.
const releaseBatch = 100

// Releaser makes pending funds available when their available_on comes, on the scope's
// clock (a ports.DueProcessor registered with the scheduler, so a test clock advance releases
// them too). Each batch is one unit of work: it claims due releases (FOR UPDATE SKIP LOCKED:
// several processes sweep together, each release happens once), posts pending → available and
// takes them off the queue.
type Releaser struct {
	uow   ports.UnitOfWorkOf[Tx]
	store Store
}

var _ ports.DueProcessor = (*Releaser)(nil)

// NewReleaser returns the sweep.
func NewReleaser(uow ports.UnitOfWorkOf[Tx], store Store) (*Releaser, error) {
	if uow == nil || store == nil {
		return nil, errors.New("ledger: the releaser needs a unit of work and its store")
	}
	return &Releaser{uow: uow, store: store}, nil
}

// ProcessDue releases every pending transaction with available_on ≤ until, earliest first,
// in batches; it returns how many it released.
func (r *Releaser) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := r.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			n = 0 // Do may run this again
			due, err := tx.Ledger().ClaimDue(ctx, scope, until, releaseBatch)
			if err != nil {
				return err
			}
			by := map[core.Scope][]Due{}
			var order []core.Scope
			for _, d := range due {
				if _, ok := by[d.Scope]; !ok {
					order = append(order, d.Scope)
				}
				by[d.Scope] = append(by[d.Scope], d)
			}
			for _, s := range order {
				at := by[s][len(by[s])-1].AvailableOn // claimed earliest first: the last is the latest
				if err := post(ctx, tx, s, at, nil, by[s]); err != nil {
					return err
				}
			}
			n = len(due)
			return nil
		})
		total += n
		if err != nil || n < releaseBatch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// NextDue returns the scope's earliest release at or before until.
func (r *Releaser) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	return r.store.NextDue(ctx, scope, until)
}
