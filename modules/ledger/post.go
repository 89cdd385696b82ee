package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// journalOf builds the journal that posts txns and releases rel in scope at: the entries and
// the deltas of every balance they touch. It checks that every entry balances.
func journalOf(scope core.Scope, at time.Time, txns []*Transaction, rel []Due) (Journal, map[BalanceKey]int64, error) {
	j := Journal{Scope: scope, At: at, ChangedAt: at, Transactions: txns, Released: rel}
	for _, d := range rel { // funds became available when they were due, not when the sweep ran
		if d.AvailableOn.Before(j.ChangedAt) {
			j.ChangedAt = d.AvailableOn
		}
	}
	deltas := map[BalanceKey]int64{}
	add := func(id string, kind EntryKind, ps []Posting) error {
		if len(ps) == 0 {
			return nil
		}
		for _, p := range ps {
			if p.Amount <= 0 || p.Source == p.Destination || !p.Source.Valid() || !p.Destination.Valid() {
				return fmt.Errorf("ledger: %s: invalid posting %+v", id, p)
			}
			deltas[BalanceKey{Scope: scope, Currency: p.Currency, Account: p.Source}] -= p.Amount
			deltas[BalanceKey{Scope: scope, Currency: p.Currency, Account: p.Destination}] += p.Amount
		}
		j.Entries = append(j.Entries, Entry{TransactionID: id, Kind: kind, Postings: ps})
		return nil
	}
	for _, t := range txns {
		if t.scope != scope {
			return Journal{}, nil, fmt.Errorf("ledger: %s is not of scope %v", t.id, scope)
		}
		if err := add(t.id, EntryPost, t.Postings()); err != nil {
			return Journal{}, nil, err
		}
	}
	for _, d := range rel {
		if d.Scope != scope {
			return Journal{}, nil, fmt.Errorf("ledger: release %s is not of scope %v", d.TransactionID, scope)
		}
		if err := add(d.TransactionID, EntryRelease, d.Postings()); err != nil {
			return Journal{}, nil, err
		}
	}
	return j, deltas, nil
}

// apply checks deltas against the locked balances: every account that may not go negative
// stays at or above zero. It answers the new balances of the accounts that change.
func apply(deltas map[BalanceKey]int64, locked map[BalanceKey]int64) (map[BalanceKey]int64, error) {
	out := make(map[BalanceKey]int64, len(deltas))
	for k, d := range deltas {
		if d == 0 {
			continue
		}
		cur, ok := locked[k]
		if !ok {
			return nil, fmt.Errorf("ledger: balance %s was not locked", k)
		}
		n := cur + d
		if (d > 0 && n < cur) || (d < 0 && n > cur) {
			return nil, fmt.Errorf("ledger: balance %s overflows", k)
		}
		if n < 0 && !k.Account.MayGoNegative() {
			return nil, ErrBalanceNegative.Msg("This movement would take the %s balance in %s below zero (%s).",
				k.Account, k.Currency, core.FormatAmount(n, k.Currency))
		}
		out[k] = n
	}
	return out, nil
}

// sortedKeys returns the keys of deltas that change, in lock order.
func sortedKeys(deltas map[BalanceKey]int64) []BalanceKey {
	keys := make([]BalanceKey, 0, len(deltas))
	for k, d := range deltas {
		if d != 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	return keys
}

// post writes txns and releases rel of scope in the unit of work tx: balances locked in
// sorted order, changed once by the net of the postings, checked on the spot.
func post(ctx context.Context, tx Tx, scope core.Scope, at time.Time, txns []*Transaction, rel []Due) error {
	if len(txns) == 0 && len(rel) == 0 {
		return nil
	}
	j, deltas, err := journalOf(scope, at, txns, rel)
	if err != nil {
		return err
	}
	return write(ctx, tx, j, deltas)
}

// postEntries writes entries that belong to existing transactions (a payout paid).
func postEntries(ctx context.Context, tx Tx, scope core.Scope, at time.Time, es []Entry) error {
	j := Journal{Scope: scope, At: at, ChangedAt: at}
	deltas := map[BalanceKey]int64{}
	for _, e := range es {
		for _, p := range e.Postings {
			if p.Amount <= 0 || p.Source == p.Destination || !p.Source.Valid() || !p.Destination.Valid() {
				return fmt.Errorf("ledger: %s: invalid posting %+v", e.TransactionID, p)
			}
			deltas[BalanceKey{Scope: scope, Currency: p.Currency, Account: p.Source}] -= p.Amount
			deltas[BalanceKey{Scope: scope, Currency: p.Currency, Account: p.Destination}] += p.Amount
		}
		j.Entries = append(j.Entries, e)
	}
	return write(ctx, tx, j, deltas)
}

// write locks the balances deltas changes (sorted), checks them and appends j. A change of an
// available balance by anything but a payout marks the scope for the next payout run.
func write(ctx context.Context, tx Tx, j Journal, deltas map[BalanceKey]int64) error {
	payout := false
	for _, t := range j.Transactions {
		payout = payout || t.typ == TypePayout
	}
	for k, d := range deltas {
		if k.Account == Available && d != 0 && !payout {
			j.AvailableChanged = true
		}
	}
	keys := sortedKeys(deltas)
	locked, err := tx.Ledger().LockBalances(ctx, keys)
	if err != nil {
		return err
	}
	if j.Balances, err = apply(deltas, locked); err != nil {
		return err
	}
	return tx.Ledger().Append(ctx, j)
}

// PaymentFacts is a succeeded payment as the ledger posts it.
type PaymentFacts struct {
	Scope     core.Scope
	PaymentID string
	Currency  core.Currency
	Amount    int64
	// Fee is the payment's fee in the charge currency (service_fee_charge_currency).
	Fee int64
	// Succeeded is when the payment succeeded (the charge, or a SEPA settlement).
	Succeeded time.Time
	// AvailableOn is when its funds are available (two days after Succeeded, or Succeeded
	// for funds available at once).
	AvailableOn time.Time
}

// PostPayment posts a succeeded payment inside the caller's unit of work: one payment
// transaction with its fee, pending until AvailableOn. A payment posts once
// (ErrTransactionExists).
func PostPayment(ctx context.Context, tx Tx, p PaymentFacts) (*Transaction, error) {
	if p.Amount <= 0 || p.Fee < 0 || p.Fee > p.Amount {
		return nil, fmt.Errorf("ledger: payment %s: amount %d, fee %d", p.PaymentID, p.Amount, p.Fee)
	}
	t, err := NewTransaction(p.Scope, p.Currency, TypePayment, p.Amount, p.Fee, p.PaymentID, p.PaymentID, p.AvailableOn, p.Succeeded)
	if err != nil {
		return nil, err
	}
	return t, post(ctx, tx, p.Scope, p.Succeeded, []*Transaction{t}, nil)
}

// PostPayments posts succeeded payments inside the caller's unit of work, as PostPayment does
// each, in a number of statements that does not grow with the payments: the payments of one
// scope that succeeded at one instant are one journal (their balances locked once, in sorted
// order, changed once by the net; their transactions, releases and postings each one
// multi-row INSERT). Journals are written in the order of their scope (the balances' lock
// order), then of their instant. Answers the transactions in the payments' order.
func PostPayments(ctx context.Context, tx Tx, ps []PaymentFacts) ([]*Transaction, error) {
	type key struct {
		scope core.Scope
		at    time.Time
	}
	out := make([]*Transaction, len(ps))
	groups := map[key][]*Transaction{}
	var keys []key
	for i, p := range ps {
		if p.Amount <= 0 || p.Fee < 0 || p.Fee > p.Amount {
			return nil, fmt.Errorf("ledger: payment %s: amount %d, fee %d", p.PaymentID, p.Amount, p.Fee)
		}
		t, err := NewTransaction(p.Scope, p.Currency, TypePayment, p.Amount, p.Fee, p.PaymentID, p.PaymentID, p.AvailableOn, p.Succeeded)
		if err != nil {
			return nil, err
		}
		out[i] = t
		k := key{p.Scope, p.Succeeded.UTC()}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], t)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.scope != b.scope {
			return BalanceKey{Scope: a.scope}.Less(BalanceKey{Scope: b.scope})
		}
		return a.at.Before(b.at)
	})
	for _, k := range keys {
		if err := post(ctx, tx, k.scope, k.at, groups[k], nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RefundFacts is a succeeded refund as the ledger posts it.
type RefundFacts struct {
	Scope     core.Scope
	RefundID  string
	PaymentID string
	Currency  core.Currency
	Amount    int64
	// FeeReversed is the part of the payment's fee the refund gives back, in the charge
	// currency (fee_reversed's service_fee_charge_currency).
	FeeReversed int64
	Created     time.Time
}

// PostRefund posts a succeeded refund inside the caller's unit of work: the refund (its
// amount out of the available balance, which may go negative) and, when the refund gives
// back part of the fee, the fee reversal. Both are available at once.
func PostRefund(ctx context.Context, tx Tx, r RefundFacts) ([]*Transaction, error) {
	if r.Amount <= 0 || r.FeeReversed < 0 {
		return nil, fmt.Errorf("ledger: refund %s: amount %d, fee reversed %d", r.RefundID, r.Amount, r.FeeReversed)
	}
	t, err := NewTransaction(r.Scope, r.Currency, TypeRefund, -r.Amount, 0, r.RefundID, r.PaymentID, r.Created, r.Created)
	if err != nil {
		return nil, err
	}
	txns := []*Transaction{t}
	if r.FeeReversed > 0 {
		f, err := NewTransaction(r.Scope, r.Currency, TypeFeeReversal, 0, -r.FeeReversed, r.RefundID, r.PaymentID, r.Created, r.Created)
		if err != nil {
			return nil, err
		}
		txns = append(txns, f)
	}
	return txns, post(ctx, tx, r.Scope, r.Created, txns, nil)
}

// DisputeFeeEUR is the dispute fee in EUR cents (D7: 15.00 EUR).
const DisputeFeeEUR = 1500

// DisputeFee is the dispute fee in currency's minor units at rate (1 EUR = rate units of
// currency, the exact decimal stored with the payment's fee: the charge day's rate), rounded
// half-up. EUR needs no rate.
func DisputeFee(currency core.Currency, rate string) (int64, error) {
	if currency == "EUR" {
		return DisputeFeeEUR, nil
	}
	r, ok := new(big.Rat).SetString(rate)
	if !ok || r.Sign() <= 0 {
		return 0, fmt.Errorf("ledger: dispute fee in %s: bad rate %q", currency, rate)
	}
	// 1500 EUR cents = 15 EUR; in minor units: 15 × rate × 10^exp.
	v := new(big.Rat).Mul(big.NewRat(DisputeFeeEUR, 100), r)
	v.Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(currency.Exponent())), nil)))
	// half-up: floor(v + 1/2)
	v.Add(v, big.NewRat(1, 2))
	q := new(big.Int).Quo(v.Num(), v.Denom())
	if !q.IsInt64() {
		return 0, errors.New("ledger: dispute fee overflows")
	}
	return q.Int64(), nil
}

// DisputeFacts is a dispute as the ledger posts it.
type DisputeFacts struct {
	Scope     core.Scope
	DisputeID string
	PaymentID string
	Currency  core.Currency
	// Amount is the disputed amount.
	Amount int64
	// Fee is the dispute fee in the charge currency (DisputeFee of the payment's rate).
	Fee int64
	// At is when the dispute opened (PostDispute) or was won (PostDisputeReversal).
	At time.Time
}

func (d DisputeFacts) check() error {
	if d.Amount <= 0 || d.Fee < 0 {
		return fmt.Errorf("ledger: dispute %s: amount %d, fee %d", d.DisputeID, d.Amount, d.Fee)
	}
	return nil
}

// PostDispute posts an opened dispute inside the caller's unit of work: the disputed amount
// out of the available balance (dispute) and the dispute fee (dispute_fee), both at once.
func PostDispute(ctx context.Context, tx Tx, d DisputeFacts) ([]*Transaction, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	t, err := NewTransaction(d.Scope, d.Currency, TypeDispute, -d.Amount, 0, d.DisputeID, d.PaymentID, d.At, d.At)
	if err != nil {
		return nil, err
	}
	txns := []*Transaction{t}
	if d.Fee > 0 {
		f, err := NewTransaction(d.Scope, d.Currency, TypeDisputeFee, 0, d.Fee, d.DisputeID, d.PaymentID, d.At, d.At)
		if err != nil {
			return nil, err
		}
		txns = append(txns, f)
	}
	return txns, post(ctx, tx, d.Scope, d.At, txns, nil)
}

// PostDisputeReversal posts a won dispute inside the caller's unit of work: one
// dispute_reversal giving back the disputed amount and the dispute fee (its fee is the fee
// returned, negative), available at once. d is the same as for PostDispute, At the time won.
func PostDisputeReversal(ctx context.Context, tx Tx, d DisputeFacts) (*Transaction, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	t, err := NewTransaction(d.Scope, d.Currency, TypeDisputeReversal, d.Amount, -d.Fee, d.DisputeID, d.PaymentID, d.At, d.At)
	if err != nil {
		return nil, err
	}
	return t, post(ctx, tx, d.Scope, d.At, []*Transaction{t}, nil)
}
