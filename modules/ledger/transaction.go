package ledger

import (
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Type is the type of a balance transaction (D16).
type Type string

const (
	TypePayment         Type = "payment"
	TypeFee             Type = "fee"
	TypeRefund          Type = "refund"
	TypeFeeReversal     Type = "fee_reversal"
	TypeDispute         Type = "dispute"
	TypeDisputeFee      Type = "dispute_fee"
	TypeDisputeReversal Type = "dispute_reversal"
	TypePayout          Type = "payout"
)

// Types lists every type.
var Types = []Type{TypePayment, TypeFee, TypeRefund, TypeFeeReversal, TypeDispute, TypeDisputeFee, TypeDisputeReversal, TypePayout}

// Valid reports whether t is one of Types.
func (t Type) Valid() bool {
	for _, v := range Types {
		if t == v {
			return true
		}
	}
	return false
}

// Status of a balance transaction: pending until available_on, then available.
type Status string

const (
	StatusPending   Status = "pending"
	StatusAvailable Status = "available"
)

// IDPrefix is the prefix of balance transaction ids.
const IDPrefix = "txn_"

// Transaction is one balance transaction: a movement of the merchant's balance. amount is the
// gross movement (positive in, negative out), fee the part Kassa keeps of it (a negative fee is
// a fee given back), and net = amount − fee is what the merchant's balance changes by. It is
// written once and never changed; only its status moves, by a release posting.
type Transaction struct {
	id          string
	scope       core.Scope
	currency    core.Currency
	typ         Type
	amount      int64
	fee         int64
	sourceID    string
	paymentID   string
	availableOn time.Time
	created     time.Time
	status      Status
	payoutID    string
}

// TransactionSnapshot is the stored form of a Transaction.
type TransactionSnapshot struct {
	ID          string
	Scope       core.Scope
	Currency    core.Currency
	Type        Type
	Amount      int64
	Fee         int64
	Net         int64
	SourceID    string
	PaymentID   string
	AvailableOn time.Time
	Created     time.Time
	Status      Status
	// PayoutID is the payout that settles the transaction ("" while none does).
	PayoutID string
}

// NewTransaction builds a new balance transaction; it is pending when availableOn is after
// created. amount and fee are not both zero; the payout type moves a negative amount and no fee.
func NewTransaction(scope core.Scope, cur core.Currency, typ Type, amount, fee int64, sourceID, paymentID string, availableOn, created time.Time) (*Transaction, error) {
	switch {
	case !typ.Valid():
		return nil, fmt.Errorf("ledger: unknown transaction type %q", typ)
	case amount == 0 && fee == 0:
		return nil, fmt.Errorf("ledger: %s of %s moves nothing", typ, sourceID)
	case sourceID == "":
		return nil, fmt.Errorf("ledger: %s without a source", typ)
	case cur == "" || scope.MerchantID == "":
		return nil, fmt.Errorf("ledger: %s of %s without a scope or currency", typ, sourceID)
	case typ == TypePayout && (amount >= 0 || fee != 0):
		return nil, fmt.Errorf("ledger: a payout takes a positive balance out (amount %d, fee %d)", amount, fee)
	}
	st := StatusAvailable
	if availableOn.After(created) {
		st = StatusPending
		if amount-fee < 0 {
			return nil, fmt.Errorf("ledger: %s of %s: only money in can wait to be available", typ, sourceID)
		}
	} else {
		availableOn = created
	}
	return &Transaction{id: core.NewID(IDPrefix), scope: scope, currency: cur, typ: typ, amount: amount, fee: fee,
		sourceID: sourceID, paymentID: paymentID, availableOn: availableOn.UTC(), created: created.UTC(), status: st}, nil
}

// RehydrateTransaction rebuilds a stored transaction.
func RehydrateTransaction(s TransactionSnapshot) *Transaction {
	return &Transaction{id: s.ID, scope: s.Scope, currency: s.Currency, typ: s.Type, amount: s.Amount, fee: s.Fee,
		sourceID: s.SourceID, paymentID: s.PaymentID, availableOn: s.AvailableOn, created: s.Created, status: s.Status,
		payoutID: s.PayoutID}
}

// Snapshot returns the full state.
func (t *Transaction) Snapshot() TransactionSnapshot {
	return TransactionSnapshot{ID: t.id, Scope: t.scope, Currency: t.currency, Type: t.typ, Amount: t.amount, Fee: t.fee,
		Net: t.Net(), SourceID: t.sourceID, PaymentID: t.paymentID, AvailableOn: t.availableOn, Created: t.created,
		Status: t.status, PayoutID: t.payoutID}
}

func (t *Transaction) ID() string              { return t.id }
func (t *Transaction) Scope() core.Scope       { return t.scope }
func (t *Transaction) Currency() core.Currency { return t.currency }
func (t *Transaction) Type() Type              { return t.typ }
func (t *Transaction) Amount() int64           { return t.amount }
func (t *Transaction) Fee() int64              { return t.fee }
func (t *Transaction) Net() int64              { return t.amount - t.fee }
func (t *Transaction) SourceID() string        { return t.sourceID }
func (t *Transaction) PaymentID() string       { return t.paymentID }
func (t *Transaction) AvailableOn() time.Time  { return t.availableOn }
func (t *Transaction) Created() time.Time      { return t.created }
func (t *Transaction) Status() Status          { return t.status }
func (t *Transaction) PayoutID() string        { return t.payoutID }

// bucket is the merchant account the transaction moves when it is posted.
func (t *Transaction) bucket() Account {
	if t.status == StatusPending {
		return Pending
	}
	return Available
}

// counterparty is where the amount comes from or goes to: the payouts in transit for a
// payout, the outside world for everything else.
func (t *Transaction) counterparty() Account {
	if t.typ == TypePayout {
		return Payouts
	}
	return World
}

// Postings are the postings that write t: its amount between the counterparty and the
// merchant's balance, its fee between that balance and Kassa's fees. They always balance.
func (t *Transaction) Postings() []Posting {
	b, cp := t.bucket(), t.counterparty()
	var ps []Posting
	if t.amount > 0 {
		ps = append(ps, Posting{Source: cp, Destination: b, Amount: t.amount, Currency: t.currency})
	} else if t.amount < 0 {
		ps = append(ps, Posting{Source: b, Destination: cp, Amount: -t.amount, Currency: t.currency})
	}
	if t.fee > 0 {
		ps = append(ps, Posting{Source: b, Destination: Fees, Amount: t.fee, Currency: t.currency})
	} else if t.fee < 0 {
		ps = append(ps, Posting{Source: Fees, Destination: b, Amount: -t.fee, Currency: t.currency})
	}
	return ps
}

// Due is a pending transaction's release: its net moves from pending to available at
// AvailableOn.
type Due struct {
	Scope         core.Scope
	TransactionID string
	Currency      core.Currency
	Net           int64
	AvailableOn   time.Time
}

// Postings of the release.
func (d Due) Postings() []Posting {
	if d.Net <= 0 {
		return nil
	}
	return []Posting{{Source: Pending, Destination: Available, Amount: d.Net, Currency: d.Currency}}
}
