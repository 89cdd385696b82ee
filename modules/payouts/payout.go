package payouts

import (
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// IDPrefix is the prefix of payout ids.
const IDPrefix = "po_"

// ArrivalDelay is how long after its payout day a payout arrives (D16: two days).
const ArrivalDelay = 48 * time.Hour

// Status of a payout.
type Status string

const (
	StatusPending Status = "pending"
	StatusPaid    Status = "paid"
)

// Payout is one transfer of a currency's available balance to the merchant's bank.
type Payout struct {
	id            string
	scope         core.Scope
	currency      core.Currency
	amount        int64
	status        Status
	created       time.Time
	arrivalDate   time.Time
	transactionID string
	railRef       string
	sentAt        *time.Time
	paidAt        *time.Time
	changed       bool
}

// Snapshot is the stored form of a payout.
type Snapshot struct {
	ID            string
	Scope         core.Scope
	Currency      core.Currency
	Amount        int64
	Status        Status
	Created       time.Time
	ArrivalDate   time.Time
	TransactionID string
	RailRef       string
	SentAt        *time.Time
	PaidAt        *time.Time
}

// newPayout builds the payout of a run at `run` (a midnight) for amount of cur.
func newPayout(scope core.Scope, cur core.Currency, amount int64, run time.Time) *Payout {
	return &Payout{id: core.NewID(IDPrefix), scope: scope, currency: cur, amount: amount, status: StatusPending,
		created: run.UTC(), arrivalDate: run.UTC().Add(ArrivalDelay)}
}

// Rehydrate rebuilds a stored payout.
func Rehydrate(s Snapshot) *Payout {
	return &Payout{id: s.ID, scope: s.Scope, currency: s.Currency, amount: s.Amount, status: s.Status, created: s.Created,
		arrivalDate: s.ArrivalDate, transactionID: s.TransactionID, railRef: s.RailRef, sentAt: s.SentAt, paidAt: s.PaidAt}
}

// Snapshot returns the full state.
func (p *Payout) Snapshot() Snapshot {
	return Snapshot{ID: p.id, Scope: p.scope, Currency: p.currency, Amount: p.amount, Status: p.status, Created: p.created,
		ArrivalDate: p.arrivalDate, TransactionID: p.transactionID, RailRef: p.railRef, SentAt: p.sentAt, PaidAt: p.paidAt}
}

func (p *Payout) ID() string              { return p.id }
func (p *Payout) Scope() core.Scope       { return p.scope }
func (p *Payout) Currency() core.Currency { return p.currency }
func (p *Payout) Amount() int64           { return p.amount }
func (p *Payout) Status() Status          { return p.status }
func (p *Payout) Created() time.Time      { return p.created }
func (p *Payout) ArrivalDate() time.Time  { return p.arrivalDate }
func (p *Payout) TransactionID() string   { return p.transactionID }
func (p *Payout) RailRef() string         { return p.railRef }
func (p *Payout) Sent() bool              { return p.sentAt != nil }

// Changed reports whether a transition changed the payout since it was read.
func (p *Payout) Changed() bool { return p.changed }

// markSent records the rail's acceptance (once).
func (p *Payout) markSent(ref string, at time.Time) error {
	if p.sentAt != nil {
		return nil
	}
	if ref == "" {
		return errors.New("payouts: the rail gave no reference")
	}
	t := at.UTC()
	p.railRef, p.sentAt, p.changed = ref, &t, true
	return nil
}

// pay marks a sent pending payout paid at its arrival date.
func (p *Payout) pay() error {
	if p.status != StatusPending || p.sentAt == nil {
		return errors.New("payouts: only a sent pending payout can be paid")
	}
	t := p.arrivalDate
	p.status, p.paidAt, p.changed = StatusPaid, &t, true
	return nil
}
