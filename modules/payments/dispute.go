package payments

import (
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// DisputePrefix is the prefix of dispute ids (D2).
const DisputePrefix = "dp_"

// DisputeStatus is where a dispute stands.
type DisputeStatus string

const (
	// DisputeNeedsResponse: just opened; the merchant may submit evidence until EvidenceDueBy.
	DisputeNeedsResponse DisputeStatus = "needs_response"
	DisputeUnderReview   DisputeStatus = "under_review"
	DisputeWon           DisputeStatus = "won"
	DisputeLost          DisputeStatus = "lost"
)

// EvidenceWindow is how long after opening a dispute the merchant may answer it
// (evidence_due_by of the App API's dispute, interface 2.8).
const EvidenceWindow = 7 * 24 * time.Hour

// Dispute is a chargeback on a payment: the buyer's bank contests the whole amount. It is
// created only by OpenDisputeOn, which moves the payment to disputed in the same step.
type Dispute struct {
	id            string
	scope         core.Scope
	paymentID     string
	amount        int64
	currency      core.Currency
	reason        string
	status        DisputeStatus
	evidenceDueBy time.Time
	created       time.Time
}

// OpenDisputeOn opens a dispute with reason on p at `at` (D9): p moves to disputed,
// remembering its state for a won dispute, and the returned dispute covers p's whole amount
// with status needs_response. A payment that cannot be disputed answers
// ErrChargeNotDisputable and is left unchanged.
func OpenDisputeOn(p *Payment, reason string, at time.Time) (*Dispute, error) {
	if reason == "" {
		return nil, errors.New("payments: a dispute needs a reason")
	}
	if err := p.OpenDispute(); err != nil {
		return nil, err
	}
	at = at.UTC()
	return &Dispute{
		id: core.NewID(DisputePrefix), scope: p.scope, paymentID: p.id, amount: p.amount,
		currency: p.currency, reason: reason, status: DisputeNeedsResponse,
		evidenceDueBy: at.Add(EvidenceWindow), created: at,
	}, nil
}

// DisputeSnapshot is the full state of a dispute as storage keeps it.
type DisputeSnapshot struct {
	ID            string
	Scope         core.Scope
	PaymentID     string
	Amount        int64
	Currency      core.Currency
	Reason        string
	Status        DisputeStatus
	EvidenceDueBy time.Time
	Created       time.Time
}

// Snapshot returns the dispute's full state for storage.
func (d *Dispute) Snapshot() DisputeSnapshot {
	return DisputeSnapshot{ID: d.id, Scope: d.scope, PaymentID: d.paymentID, Amount: d.amount, Currency: d.currency,
		Reason: d.reason, Status: d.status, EvidenceDueBy: d.evidenceDueBy, Created: d.created}
}

func (d *Dispute) ID() string               { return d.id }
func (d *Dispute) Scope() core.Scope        { return d.scope }
func (d *Dispute) PaymentID() string        { return d.paymentID }
func (d *Dispute) Amount() int64            { return d.amount }
func (d *Dispute) Currency() core.Currency  { return d.currency }
func (d *Dispute) Reason() string           { return d.reason }
func (d *Dispute) Status() DisputeStatus    { return d.status }
func (d *Dispute) EvidenceDueBy() time.Time { return d.evidenceDueBy }
func (d *Dispute) Created() time.Time       { return d.created }
