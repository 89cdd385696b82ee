package payments

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Daily volume totals: per scope, UTC day of a payment's creation and currency, the sums the
// App API's analytics summary reports over the payments in one of CapturedStatuses (their
// amounts, refunded amounts, service fees in the charge currency, and their number). They are
// kept in the unit of work of every write that moves a payment into or out of those statuses
// or changes what it counts (insertPayment, savePayment), so that the summary reads at most a
// row per day and currency instead of every payment.

// VolumeChange is what one payment write adds to (or, negative, takes from) the totals of its
// day and currency.
type VolumeChange struct {
	Scope    core.Scope
	Day      time.Time // UTC midnight of the payment's creation
	Currency core.Currency
	Gross    int64 // payment amounts
	Refunded int64 // refunded amounts
	Fees     int64 // service fees in the charge currency
	Count    int64 // payments
}

// IsZero reports whether the change moves nothing.
func (c VolumeChange) IsZero() bool {
	return c.Gross == 0 && c.Refunded == 0 && c.Fees == 0 && c.Count == 0
}

// VolumeRepository keeps the daily volume totals inside a unit of work.
type VolumeRepository interface {
	// Add adds c to the totals of its scope, day and currency (a new row when there is none)
	// and holds that row for the rest of the unit of work.
	Add(ctx context.Context, c VolumeChange) error
}

// volumeFigures is what one payment counts in its day's totals.
type volumeFigures struct{ gross, refunded, fees, count int64 }

// countedFigures is what p counts: its amount, refunded amount and service fee, and one
// payment, while it is in one of CapturedStatuses; nothing otherwise.
func countedFigures(p *Payment) volumeFigures {
	if !slices.Contains(CapturedStatuses, p.Status()) {
		return volumeFigures{}
	}
	return volumeFigures{gross: p.Amount(), refunded: p.AmountRefunded(), fees: p.Fee().ServiceFeeChargeCurrency, count: 1}
}

// volumeChange is the change from what p counted (was) to what it counts now.
func volumeChange(p *Payment, was volumeFigures) VolumeChange {
	now := countedFigures(p)
	c := p.Created().UTC()
	return VolumeChange{Scope: p.Scope(), Day: time.Date(c.Year(), c.Month(), c.Day(), 0, 0, 0, 0, time.UTC),
		Currency: p.Currency(), Gross: now.gross - was.gross, Refunded: now.refunded - was.refunded,
		Fees: now.fees - was.fees, Count: now.count - was.count}
}

// InsertedVolume is what a new payment adds to its day's totals.
func (r *Record) InsertedVolume() VolumeChange { return volumeChange(r.Payment, volumeFigures{}) }

// SavedVolume is what the record's state changes since it was built or loaded (its
// transitions) add to its day's totals; zero when none changed what it counts. It depends only
// on the record, so a unit of work that runs again saves the same change.
func (r *Record) SavedVolume() VolumeChange {
	if !r.counted.set {
		return volumeChange(r.Payment, countedFigures(r.Payment)) // no state change: zero
	}
	return volumeChange(r.Payment, r.counted.was)
}

// beforeStateChange keeps what the payment counts before its first state change (called by
// each transition that changes its state, before it does).
func (r *Record) beforeStateChange() {
	if !r.counted.set {
		r.counted.was, r.counted.set = countedFigures(r.Payment), true
	}
}

// insertPayment writes a new payment and adds it to its day's volume totals, in tx.
func insertPayment(ctx context.Context, tx Tx, rec *Record) error {
	if err := tx.Payments().Insert(ctx, rec); err != nil {
		return err
	}
	if c := rec.InsertedVolume(); !c.IsZero() {
		return tx.Volumes().Add(ctx, c)
	}
	return nil
}

// savePayment writes what a payment's transitions changed and moves its day's volume totals
// by what that changed in them, in tx.
func savePayment(ctx context.Context, tx Tx, rec *Record) error {
	if err := tx.Payments().Save(ctx, rec); err != nil {
		return err
	}
	if c := rec.SavedVolume(); !c.IsZero() {
		return tx.Volumes().Add(ctx, c)
	}
	return nil
}

// insertPayments saves the new payments recs with one statement (PaymentRepository.InsertMany)
// and moves their days' volume totals with one write per scope, day and currency (sumVolumes),
// in tx: what insertPayment does for each, in fewer statements.
func insertPayments(ctx context.Context, tx Tx, recs []*Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := tx.Payments().InsertMany(ctx, recs); err != nil {
		return err
	}
	cs := make([]VolumeChange, 0, len(recs))
	for _, rec := range recs {
		cs = append(cs, rec.InsertedVolume())
	}
	for _, c := range sumVolumes(cs) {
		if err := tx.Volumes().Add(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// sumVolumes adds up the changes cs of each scope, day and currency, answered in the order of
// merchant, environment, day and currency (the lock order of their rows); a sum that moves
// nothing is left out.
func sumVolumes(cs []VolumeChange) []VolumeChange {
	type key struct {
		scope    core.Scope
		day      int64
		currency core.Currency
	}
	at := make(map[key]int, len(cs))
	var out []VolumeChange
	for _, c := range cs {
		k := key{c.Scope, c.Day.UTC().Unix(), c.Currency}
		i, ok := at[k]
		if !ok {
			at[k], i = len(out), len(out)
			out = append(out, VolumeChange{Scope: c.Scope, Day: c.Day, Currency: c.Currency})
		}
		s := &out[i]
		s.Gross, s.Refunded, s.Fees, s.Count = s.Gross+c.Gross, s.Refunded+c.Refunded, s.Fees+c.Fees, s.Count+c.Count
	}
	out = slices.DeleteFunc(out, VolumeChange.IsZero)
	slices.SortFunc(out, func(x, y VolumeChange) int {
		return cmp.Or(cmp.Compare(x.Scope.MerchantID, y.Scope.MerchantID), cmp.Compare(x.Scope.Env, y.Scope.Env),
			x.Day.Compare(y.Day), cmp.Compare(x.Currency, y.Currency))
	})
	return out
}
