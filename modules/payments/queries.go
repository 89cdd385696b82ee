package payments

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Lister reads pages and sums of a scope's payments (the dashboard's read side).
type Lister interface {
	// List returns one page of the scope's payments, newest first, only those in status when
	// it is not empty. A cursor that is not a payment of the scope answers ErrUnknownCursor.
	List(ctx context.Context, scope core.Scope, q core.ListQuery, status Status) (core.Page[*Payment], error)
	// Summarize counts the scope's payments and sums, per currency, the amounts of those in
	// one of the captured statuses, and counts and sums those disputed apart.
	Summarize(ctx context.Context, scope core.Scope, captured []Status) (Summary, error)
	// VolumeByDay sums, per currency and UTC day, the amounts and the number of the scope's
	// payments in one of the captured statuses created in [from, to).
	VolumeByDay(ctx context.Context, scope core.Scope, captured []Status, from, to time.Time) ([]DayTotal, error)
}

// Summary is the scope's payment figures of the dashboard overview.
type Summary struct {
	Count int64
	// SucceededCount counts the payments in one of SucceededStatuses (succeeded, and refunded
	// since); a disputed payment is not among them.
	SucceededCount int64
	// Gross is, per currency (sorted by code), the sum of the amounts of the payments in one of
	// SucceededStatuses.
	Gross []core.Money
	// DisputedCount counts the disputed payments (a dispute open, or lost); Disputed sums
	// their amounts per currency (sorted by code).
	DisputedCount int64
	Disputed      []core.Money
}

// SucceededStatuses are the states the overview counts as succeeded: succeeded, and refunded
// in part or in full since. A disputed payment is shown apart (Summary.DisputedCount).
var SucceededStatuses = []Status{StatusSucceeded, StatusPartiallyRefunded, StatusRefunded}

// CapturedStatuses are the states of a payment whose money was taken: succeeded, and the
// states a succeeded payment can move to (refunds, disputes). Overview figures count these.
var CapturedStatuses = []Status{StatusSucceeded, StatusPartiallyRefunded, StatusRefunded, StatusDisputed}

// statuses lists every payment status (those Status.Valid accepts), for the message of an
// invalid status filter.
var statuses = []Status{StatusProcessing, StatusSucceeded, StatusFailed, StatusPartiallyRefunded, StatusRefunded, StatusDisputed}

// Queries are the read-only payment use cases of the dashboard.
type Queries struct {
	reader Reader
	lister Lister
	rates  ports.FXRates
}

// NewQueries wires the read use cases to their store and to the FX source the fees were
// computed with (for the rate shown in a fee breakdown; nil shows the rate stored with each
// fee only). The store is required.
func NewQueries(reader Reader, lister Lister, rates ports.FXRates) (*Queries, error) {
	if reader == nil || lister == nil {
		return nil, errors.New("payments: queries: the reader and the lister are required")
	}
	return &Queries{reader: reader, lister: lister, rates: rates}, nil
}

// List returns a page of the scope's payments, newest first, optionally in one status.
func (q *Queries) List(ctx context.Context, scope core.Scope, lq core.ListQuery, status string) (core.Page[*Payment], error) {
	lq, err := lq.Normalize()
	if err != nil {
		return core.Page[*Payment]{}, err
	}
	st := Status(status)
	if status != "" && !st.Valid() {
		names := make([]string, len(statuses))
		for i, s := range statuses {
			names[i] = string(s)
		}
		return core.Page[*Payment]{}, core.InvalidField("status", "status must be one of %s.", strings.Join(names, ", "))
	}
	page, err := q.lister.List(ctx, scope, lq, st)
	if errors.Is(err, ErrUnknownCursor) {
		return core.Page[*Payment]{}, lq.UnknownCursor()
	}
	return page, err
}

// Get returns one payment of the scope, or 404 resource_missing on `id`.
func (q *Queries) Get(ctx context.Context, scope core.Scope, id string) (*Payment, error) {
	p, err := q.reader.Get(ctx, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, core.NotFound("payment", "id", id)
	}
	return p, err
}

// Summary returns the scope's overview figures.
func (q *Queries) Summary(ctx context.Context, scope core.Scope) (Summary, error) {
	return q.lister.Summarize(ctx, scope, SucceededStatuses)
}

// FeeBreakdown is how a payment's fee splits (D7). ServiceEUR + PSPEUR = TotalEUR, the fee the
// merchant pays; TotalChargeCurrency is TotalEUR at Rate in the charge currency, the amount
// debited; Net is the amount minus that.
type FeeBreakdown struct {
	ServiceEUR, PSPEUR, TotalEUR int64
	ChargeCurrency               core.Currency
	TotalChargeCurrency          int64
	Net                          int64
	// Rate is 1 EUR in the charge currency (exact decimal), published on RateDate.
	Rate     string
	RateDate time.Time
}

// Breakdown splits the payment's locked fee with the rate it was converted at: the rate stored
// with the fee, or for a fee stored before rates were kept, the rate of the fee's rate day
// from the same FX source (1 for EUR).
func (q *Queries) Breakdown(ctx context.Context, p *Payment) (FeeBreakdown, error) {
	fee := p.Fee()
	// The fee splits into Kassa's part and the processor's, in EUR; the net is the amount less
	// the fee in the charge currency. Money refuses to mix the two currencies.
	total, psp := core.NewMoney(fee.ServiceFeeEUR, "EUR"), core.NewMoney(fee.PSPFeeEUR, "EUR")
	service, err := total.Sub(psp)
	if err != nil {
		return FeeBreakdown{}, fmt.Errorf("payments: fee of %s: %w", p.ID(), err)
	}
	net, err := core.NewMoney(p.Amount(), p.Currency()).Sub(core.NewMoney(fee.ServiceFeeChargeCurrency, fee.Currency))
	if err != nil {
		return FeeBreakdown{}, fmt.Errorf("payments: fee of %s: %w", p.ID(), err)
	}
	b := FeeBreakdown{
		ServiceEUR: service.Amount(), PSPEUR: psp.Amount(), TotalEUR: total.Amount(),
		ChargeCurrency: p.Currency(), TotalChargeCurrency: fee.ServiceFeeChargeCurrency,
		Net: net.Amount(), Rate: "1", RateDate: fee.RateDate,
	}
	if p.Currency() == "EUR" || q.rates == nil {
		return b, nil
	}
	if fee.Rate != "" { // the rate stored with the fee
		b.Rate = fee.Rate
		return b, nil
	}
	r, err := q.rates.Rate(ctx, fee.RateDate, "EUR", p.Currency())
	if err != nil {
		return FeeBreakdown{}, fmt.Errorf("payments: rate of %s: %w", p.ID(), err)
	}
	b.Rate = decimal(r.Value())
	return b, nil
}

// decimal renders an exact rate with up to 10 decimals and no trailing zeros.
func decimal(r *big.Rat) string {
	s := r.FloatString(10)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
