package billing

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// The monthly recurring revenue history is a daily snapshot, not a log of changes: at 00:00
// UTC of each merchant environment's clock the MRR sweep records SummarizeRecurring of that
// moment. It is exact because the sweep is registered with the scheduler after the
// subscription sweeps: a clock advance runs it at each midnight in time order with every
// renewal, dunning step and resumption due before it, and nothing else changes a subscription
// between two due times. A delta written with every subscription change would be exact too,
// but it needs a line in every path that changes a status, an amount or a pause (and one more
// in every future one); a forgotten path would drift silently, a forgotten snapshot shows as a
// gap.

// MRRHistoryDays is how many days the dashboard's chart shows, ending today.
const MRRHistoryDays = 90

// mrrBatch is how many scopes one unit of work snapshots.
const mrrBatch = 100

// MRRTx is what the MRR sweep needs inside a unit of work.
type MRRTx interface {
	MRR() MRRRepository
}

// MRRMark is a scope whose next snapshot is due at NextAt (a midnight, UTC).
type MRRMark struct {
	Scope  core.Scope
	NextAt time.Time
}

// MRRRepository keeps the MRR history inside a unit of work. Every call runs its statement
// where it is called.
type MRRRepository interface {
	// ClaimDue locks up to limit marks due at or before until, earliest first, skipping those
	// another unit of work holds (SKIP LOCKED). With scope nil it covers live scopes and test
	// scopes whose clock is not frozen.
	ClaimDue(ctx context.Context, scope *core.Scope, until time.Time, limit int) ([]MRRMark, error)
	// RecurringGroups sums the scope's active and past_due subscriptions (Reads.RecurringGroups)
	// in this unit of work.
	RecurringGroups(ctx context.Context, scope core.Scope) ([]RecurringGroup, error)
	// Record writes the scope's snapshot of every midnight from..to (inclusive), each with the
	// amounts mrr, in one statement; a day already recorded is left as it is.
	Record(ctx context.Context, scope core.Scope, from, to, takenAt time.Time, mrr []core.Money) error
	// Advance moves the scope's mark to next.
	Advance(ctx context.Context, scope core.Scope, next time.Time) error
}

// MRRDay is one recorded day of the history: the recurring revenue per currency at its
// midnight (a currency of the scope missing from MRR was 0 that day).
type MRRDay struct {
	Day time.Time
	MRR []core.Money
}

// MRRStore reads the history outside a unit of work.
type MRRStore interface {
	// MRRDays reads the scope's recorded days from..to (midnights, inclusive), oldest first.
	MRRDays(ctx context.Context, scope core.Scope, from, to time.Time) ([]MRRDay, error)
	// NextMRR is the scope's next snapshot time if it is at or before until.
	NextMRR(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error)
}

// MRRDeps are the MRR history's collaborators, all required.
type MRRDeps struct {
	UoW    ports.UnitOfWorkOf[MRRTx]
	Store  MRRStore
	Clocks ports.Clocks
	Wall   core.Clock
}

// MRRHistory takes the daily snapshots (a ports.DueProcessor with NextDue) and reads them.
type MRRHistory struct {
	d MRRDeps
}

var _ ports.DueProcessor = (*MRRHistory)(nil)

// NewMRRHistory checks d.
func NewMRRHistory(d MRRDeps) (*MRRHistory, error) {
	if d.UoW == nil || d.Store == nil || d.Clocks == nil || d.Wall == nil {
		return nil, errors.New("billing: the MRR history needs the unit of work, the store and the clocks")
	}
	return &MRRHistory{d: d}, nil
}

// midnight is the 00:00 UTC at or before t.
func midnight(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// NextMidnight is the first 00:00 UTC strictly after t: when a new scope's first snapshot is
// taken.
func NextMidnight(t time.Time) time.Time { return midnight(t).Add(24 * time.Hour) }

// ProcessDue takes every snapshot due by until, one unit of work per batch of scopes. With a
// scope (a test clock advance) every midnight from the scope's mark up to until is taken at
// once, all with the figure read once: the scheduler calls with an until before the next work
// of any other processor, so no subscription changes between those midnights, and a run of
// idle days costs the statements of one. Without one (the background loop, at the wall clock) a scope's snapshot
// falls on the last midnight at or before until; midnights before it that were not taken in
// time (the server was not running) are left without data rather than filled with today's
// figure.
func (h *MRRHistory) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := h.d.UoW.Do(ctx, func(ctx context.Context, tx MRRTx) error {
			n = 0
			marks, err := tx.MRR().ClaimDue(ctx, scope, until, mrrBatch)
			if err != nil {
				return err
			}
			for _, m := range marks {
				from, to := m.NextAt, midnight(until)
				if scope == nil {
					from = to
				}
				if err := h.snapshot(ctx, tx, m.Scope, from, to); err != nil {
					return err
				}
			}
			n = len(marks)
			return nil
		})
		total += n
		if err != nil || n < mrrBatch {
			return total, err
		}
	}
}

// snapshot records the scope's recurring revenue now as the figure of every midnight from..to
// and moves its mark to the midnight after to.
func (h *MRRHistory) snapshot(ctx context.Context, tx MRRTx, scope core.Scope, from, to time.Time) error {
	gs, err := tx.MRR().RecurringGroups(ctx, scope)
	if err != nil {
		return err
	}
	sum, err := SummarizeRecurring(gs)
	if err != nil {
		return err
	}
	if err := tx.MRR().Record(ctx, scope, from, to, h.d.Wall.Now(), sum.MRR); err != nil {
		return err
	}
	return tx.MRR().Advance(ctx, scope, to.Add(24*time.Hour))
}

// NextDue is the scope's next snapshot at or before until.
func (h *MRRHistory) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	return h.d.Store.NextMRR(ctx, scope, until)
}

// MRRPoint is one day of a currency's series: Amount nil when the day has no snapshot.
type MRRPoint struct {
	Day    time.Time
	Amount *int64
}

// MRRSeries is one currency's days, oldest first.
type MRRSeries struct {
	Currency core.Currency
	Points   []MRRPoint
}

// MRRChart is the scope's last MRRHistoryDays days ending today on its clock.
type MRRChart struct {
	Start, End time.Time
	Series     []MRRSeries
}

// History answers the chart: one series per currency that had recurring revenue on a recorded
// day of the range, each with every day of the range (nil where the day was not recorded, 0
// where it was and the currency had none).
func (h *MRRHistory) History(ctx context.Context, scope core.Scope) (MRRChart, error) {
	now, err := h.d.Clocks.Now(ctx, scope)
	if err != nil {
		return MRRChart{}, err
	}
	end := midnight(now)
	start := end.AddDate(0, 0, -(MRRHistoryDays - 1))
	days, err := h.d.Store.MRRDays(ctx, scope, start, end)
	if err != nil {
		return MRRChart{}, err
	}
	return chartOf(start, end, days), nil
}

// chartOf lays the recorded days out over start..end.
func chartOf(start, end time.Time, days []MRRDay) MRRChart {
	recorded := make(map[time.Time]map[core.Currency]int64, len(days))
	var curs []core.Currency
	seen := map[core.Currency]bool{}
	for _, d := range days {
		m := make(map[core.Currency]int64, len(d.MRR))
		for _, v := range d.MRR {
			m[v.Currency()] = v.Amount()
			if !seen[v.Currency()] {
				seen[v.Currency()] = true
				curs = append(curs, v.Currency())
			}
		}
		recorded[midnight(d.Day)] = m
	}
	slices.Sort(curs)
	out := MRRChart{Start: start, End: end, Series: make([]MRRSeries, 0, len(curs))}
	for _, c := range curs {
		s := MRRSeries{Currency: c}
		for d := start; !d.After(end); d = d.Add(24 * time.Hour) {
			p := MRRPoint{Day: d}
			if m, ok := recorded[d]; ok {
				v := m[c]
				p.Amount = &v
			}
			s.Points = append(s.Points, p)
		}
		out.Series = append(out.Series, s)
	}
	return out
}
