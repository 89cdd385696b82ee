package payments

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// DisputePrefix is the prefix of dispute ids (D2).
const DisputePrefix = "dp_"

// DisputeStatus is where a dispute stands.
type DisputeStatus string

const (
	// DisputeNeedsResponse: just opened; the merchant may save and submit evidence until
	// EvidenceDueBy.
	DisputeNeedsResponse DisputeStatus = "needs_response"
	// DisputeUnderReview: evidence was submitted; the bank decides (the sandbox one day later).
	DisputeUnderReview DisputeStatus = "under_review"
	// DisputeWon: closed in the merchant's favour; the payment is back in its previous state.
	DisputeWon DisputeStatus = "won"
	// DisputeLost: closed in the cardholder's favour; the payment stays disputed.
	DisputeLost DisputeStatus = "lost"
)

// Closed reports whether the dispute is over (won or lost).
func (s DisputeStatus) Closed() bool { return s == DisputeWon || s == DisputeLost }

// EvidenceWindow is how long after opening a dispute the merchant may answer it
// (evidence_due_by, D16: opened + 7 days).
const EvidenceWindow = 7 * 24 * time.Hour

// ReviewDelay is how long after evidence is submitted the sandbox's bank decides (D16).
const ReviewDelay = 24 * time.Hour

// MaxEvidenceRunes is the longest evidence text accepted, in characters.
const MaxEvidenceRunes = 20000

// WinningEvidence is the text that makes the sandbox's bank decide for the merchant (D16).
const WinningEvidence = "winning_evidence"

// DisputeFeeEUR is the fee of a dispute in EUR cents (D7: 15.00 EUR), debited when the
// dispute opens and returned when it is won.
const DisputeFeeEUR int64 = 1500

// DisputeFee is the dispute fee locked when the dispute opens: 15.00 EUR converted to the
// charge currency at the rate of the charge day (the rate locked with the payment's fee), with
// the rate kept beside it so that the balance and the breakdown never look it up again.
type DisputeFee struct {
	// Amount is the fee in the charge currency's minor units (what the balance is debited).
	Amount int64
	// EUR is the fee in EUR cents (DisputeFeeEUR).
	EUR int64
	// Rate is 1 EUR in the charge currency as an exact decimal string ("1" for EUR), published
	// on RateDate. Empty only for disputes opened before the fee was kept.
	Rate     string
	RateDate time.Time
}

// DisputeFeeFor converts DisputeFeeEUR to currency at rate (1 EUR = rate units of
// currency, exact decimal string), rounded half-up to the currency's minor unit:
// round(1500 × rate × 10^e / 100).
func DisputeFeeFor(currency core.Currency, rate string, rateDate time.Time) (DisputeFee, error) {
	r, ok := new(big.Rat).SetString(rate)
	if !ok || r.Sign() <= 0 {
		return DisputeFee{}, fmt.Errorf("payments: dispute fee: rate %q is not a positive decimal", rate)
	}
	if currency == "EUR" && r.Cmp(big.NewRat(1, 1)) != 0 {
		return DisputeFee{}, fmt.Errorf("payments: dispute fee: EUR→EUR rate must be 1, got %s", rate)
	}
	perCent := new(big.Rat).Mul(r, pow10Rat(currency.Exponent()-2))
	amount, err := roundHalfUp(new(big.Rat).Mul(big.NewRat(DisputeFeeEUR, 1), perCent))
	if err != nil {
		return DisputeFee{}, err
	}
	return DisputeFee{Amount: amount, EUR: DisputeFeeEUR, Rate: rate, RateDate: rateDate.UTC()}, nil
}

// Dispute is a chargeback on a payment: the buyer's bank contests the whole amount. It is
// created only by OpenDisputeOn, which moves the payment to disputed in the same step.
//
// Lifecycle (D16):
//
//	needs_response ─SaveEvidence(submit)→ under_review ─Decide→ won | lost
//	needs_response ─Decide at EvidenceDueBy (no evidence submitted)→ lost (past_due)
//
// Evidence saved without submitting keeps needs_response. A closed dispute never changes.
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
	fee           DisputeFee
	evidence      string
	submittedAt   *time.Time
	closedAt      *time.Time
	pastDue       bool
	// changed reports that the dispute changed since it was built or loaded (Save writes it).
	changed bool
}

// OpenDisputeOn opens a dispute with reason on p at `at` (D9): p moves to disputed,
// remembering its state for a won dispute, and the returned dispute covers p's whole amount
// with status needs_response and the dispute fee converted at the rate of p's fee (the
// charge day's). A payment that cannot be disputed answers ErrChargeNotDisputable and is
// left unchanged.
func OpenDisputeOn(p *Payment, reason string, at time.Time) (*Dispute, error) {
	fee, err := disputeFeeOf(p)
	if err != nil {
		return nil, err
	}
	return openDisputeOn(p, reason, at, fee)
}

func openDisputeOn(p *Payment, reason string, at time.Time, fee DisputeFee) (*Dispute, error) {
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
		evidenceDueBy: at.Add(EvidenceWindow), created: at, fee: fee,
	}, nil
}

// disputeFeeOf is the dispute fee of p at the rate locked with p's fee (the charge day's
// reference rate, D7). A EUR payment needs no rate.
func disputeFeeOf(p *Payment) (DisputeFee, error) {
	f := p.Fee()
	day := f.RateDate
	if day.IsZero() {
		day = p.Created().UTC().Truncate(24 * time.Hour)
	}
	if p.Currency() == "EUR" {
		return DisputeFeeFor("EUR", "1", day)
	}
	if f.Rate == "" {
		return DisputeFee{}, fmt.Errorf("payments: dispute fee of %s: %w", p.ID(), ErrFeeRateMissing)
	}
	return DisputeFeeFor(p.Currency(), f.Rate, day)
}

// ErrFeeRateMissing: a payment whose fee was stored before rates were kept; its dispute fee
// takes the rate of the fee's rate day from the FX port (Record.OpenDisputeAtRate).
var ErrFeeRateMissing = errors.New("payments: the payment's fee kept no rate")

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
	Fee           DisputeFee
	Evidence      string
	SubmittedAt   *time.Time
	ClosedAt      *time.Time
	PastDue       bool
}

// Snapshot returns the dispute's full state for storage.
func (d *Dispute) Snapshot() DisputeSnapshot {
	return DisputeSnapshot{ID: d.id, Scope: d.scope, PaymentID: d.paymentID, Amount: d.amount, Currency: d.currency,
		Reason: d.reason, Status: d.status, EvidenceDueBy: d.evidenceDueBy, Created: d.created, Fee: d.fee,
		Evidence: d.evidence, SubmittedAt: cloneTime(d.submittedAt), ClosedAt: cloneTime(d.closedAt), PastDue: d.pastDue}
}

// RestoreDispute rebuilds a stored dispute (it reports no change).
func RestoreDispute(s DisputeSnapshot) *Dispute {
	return &Dispute{id: s.ID, scope: s.Scope, paymentID: s.PaymentID, amount: s.Amount, currency: s.Currency,
		reason: s.Reason, status: s.Status, evidenceDueBy: s.EvidenceDueBy.UTC(), created: s.Created.UTC(), fee: s.Fee,
		evidence: s.Evidence, submittedAt: cloneTime(s.SubmittedAt), closedAt: cloneTime(s.ClosedAt), pastDue: s.PastDue}
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

// Fee is the dispute fee locked when the dispute opened.
func (d *Dispute) Fee() DisputeFee { return d.fee }

// Evidence is the evidence text saved or submitted ("" when none).
func (d *Dispute) Evidence() string { return d.evidence }

// SubmittedAt is when the evidence was submitted (nil: not submitted).
func (d *Dispute) SubmittedAt() *time.Time { return cloneTime(d.submittedAt) }

// ClosedAt is when the dispute was won or lost (nil: still open).
func (d *Dispute) ClosedAt() *time.Time { return cloneTime(d.closedAt) }

// PastDue reports whether the evidence window closed without submitted evidence at now: a
// dispute lost that way, or one still waiting for a response after EvidenceDueBy.
func (d *Dispute) PastDue(now time.Time) bool {
	return d.pastDue || (d.status == DisputeNeedsResponse && !now.Before(d.evidenceDueBy))
}

// Changed reports whether the dispute changed since it was built or loaded.
func (d *Dispute) Changed() bool { return d.changed }

// Evidence errors (D16).
var (
	// ErrEvidenceTooLong: evidence above MaxEvidenceRunes characters.
	ErrEvidenceTooLong = core.NewError(core.TypeInvalidRequest, "evidence_too_long", "text",
		fmt.Sprintf("The evidence can be at most %d characters long.", MaxEvidenceRunes))
	// ErrEvidenceMissing: submitting empty evidence.
	ErrEvidenceMissing = core.NewError(core.TypeInvalidRequest, "evidence_missing", "text",
		"Write the evidence before submitting it.")
	// ErrDisputeNotAcceptingEvidence: evidence for a dispute that is under review or closed.
	ErrDisputeNotAcceptingEvidence = core.NewError(core.TypeInvalidState, "dispute_not_accepting_evidence", "",
		"This dispute no longer accepts evidence: it was submitted already or the dispute is closed.")
	// ErrEvidenceWindowClosed: evidence after evidence_due_by.
	ErrEvidenceWindowClosed = core.NewError(core.TypeInvalidState, "evidence_window_closed", "",
		"The time to respond to this dispute has passed.")
	// ErrDisputeNotFound: no dispute with that id in the scope.
	ErrDisputeNotFound = core.NewError(core.TypeNotFound, "dispute_not_found", "id", "No such dispute.")
)

// ValidateEvidence checks evidence text as input, before any state is read: at most
// MaxEvidenceRunes characters of valid UTF-8, and something written when it is submitted.
func ValidateEvidence(text string, submit bool) error {
	if !utf8.ValidString(text) || utf8.RuneCountInString(text) > MaxEvidenceRunes {
		return ErrEvidenceTooLong
	}
	if submit && strings.TrimSpace(text) == "" {
		return ErrEvidenceMissing
	}
	return nil
}

// SaveEvidence saves the evidence text at `at`; with submit it is submitted and the dispute
// moves to under_review (decided ReviewDelay later). Only a dispute that needs a response
// accepts evidence, and only before EvidenceDueBy. It reports whether the status changed.
func (d *Dispute) SaveEvidence(text string, submit bool, at time.Time) (statusChanged bool, err error) {
	if err := ValidateEvidence(text, submit); err != nil {
		return false, err
	}
	if d.status != DisputeNeedsResponse {
		return false, ErrDisputeNotAcceptingEvidence
	}
	if !at.Before(d.evidenceDueBy) {
		return false, ErrEvidenceWindowClosed
	}
	d.evidence = text
	d.changed = true
	if !submit {
		return false, nil
	}
	t := at.UTC()
	d.submittedAt = &t
	d.status = DisputeUnderReview
	return true, nil
}

// DueAt is when the dispute sweep next has work on the dispute: a dispute that needs a
// response is lost at EvidenceDueBy; one under review is decided ReviewDelay after its
// evidence was submitted; a closed one has none (nil). Storage keeps a projection of this
// rule (disputes.due_at) to find due work with an index.
func (d *Dispute) DueAt() *time.Time {
	switch d.status {
	case DisputeNeedsResponse:
		t := d.evidenceDueBy
		return &t
	case DisputeUnderReview:
		if d.submittedAt != nil {
			t := d.submittedAt.Add(ReviewDelay)
			return &t
		}
	case DisputeWon, DisputeLost: // closed: no due work
	}
	return nil
}

// SandboxOutcome is the sandbox bank's decision on a dispute that is due (D16): evidence
// containing WinningEvidence wins, any other evidence loses, and no evidence by the due time
// loses.
func SandboxOutcome(d *Dispute) DisputeStatus {
	if d.status == DisputeUnderReview && strings.Contains(d.evidence, WinningEvidence) {
		return DisputeWon
	}
	return DisputeLost
}

// Close ends an open dispute with outcome (won or lost) at `at`, and moves p, the disputed
// payment, with it: won returns p to its state before the dispute, lost keeps it disputed for
// good (D9). A dispute closed without submitted evidence is past due.
func (d *Dispute) Close(p *Payment, outcome DisputeStatus, at time.Time) error {
	if d.status.Closed() {
		return ErrDisputeNotOpen
	}
	if p.ID() != d.paymentID || p.Scope() != d.scope {
		return fmt.Errorf("payments: dispute %s is not on payment %s", d.id, p.ID())
	}
	switch outcome {
	case DisputeWon:
		if err := p.WinDispute(); err != nil {
			return err
		}
	case DisputeLost:
		if err := p.LoseDispute(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("payments: %q is not an outcome of a dispute", outcome)
	}
	if d.status == DisputeNeedsResponse {
		d.pastDue = true
	}
	t := at.UTC()
	d.status, d.closedAt, d.changed = outcome, &t, true
	return nil
}
