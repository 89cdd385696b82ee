package ledger

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// PayoutDue is a scope whose available balance changed at ChangedAt (the earliest change not
// yet paid out): its next payout run is at the first midnight (UTC) after it.
type PayoutDue struct {
	Scope     core.Scope
	ChangedAt time.Time
}

// RunAt is the payout run that takes the change: the first 00:00 UTC after ChangedAt.
func (d PayoutDue) RunAt() time.Time { return NextMidnight(d.ChangedAt) }

// NextMidnight is the first 00:00 UTC strictly after t.
func NextMidnight(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}

// ClaimPayoutDue locks up to limit scopes of envs whose payout run is due by until (FOR UPDATE
// SKIP LOCKED: a scope is run by one process), earliest first.
func ClaimPayoutDue(ctx context.Context, tx Tx, scope *core.Scope, envs []core.Environment, until time.Time, limit int) ([]PayoutDue, error) {
	// Due by until ⟺ the first midnight after the change is ≤ until ⟺ the change is before
	// the last midnight at or before until.
	return tx.Ledger().ClaimPayoutDue(ctx, scope, envs, until.UTC().Truncate(24*time.Hour), limit)
}

// LockAvailable locks the available balance (and the payouts in transit) of every currency of
// scope, in sorted order, and answers the available balance per currency.
func LockAvailable(ctx context.Context, tx Tx, scope core.Scope) (map[core.Currency]int64, error) {
	curs, err := tx.Ledger().Currencies(ctx, scope)
	if err != nil {
		return nil, err
	}
	var keys []BalanceKey
	for _, c := range curs {
		keys = append(keys, BalanceKey{Scope: scope, Currency: c, Account: Available}, BalanceKey{Scope: scope, Currency: c, Account: Payouts})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	locked, err := tx.Ledger().LockBalances(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[core.Currency]int64, len(curs))
	for _, c := range curs {
		out[c] = locked[BalanceKey{Scope: scope, Currency: c, Account: Available}]
	}
	return out, nil
}

// PayoutFacts is a payout as the ledger posts it.
type PayoutFacts struct {
	Scope    core.Scope
	PayoutID string
	Currency core.Currency
	Amount   int64
	// At is the payout run (PostPayout) or its arrival (PostPayoutPaid).
	At time.Time
	// TransactionID is the payout's balance transaction (PostPayoutPaid).
	TransactionID string
}

// PostPayout posts a payout of the whole available balance of a currency inside the caller's
// unit of work (after LockAvailable): the payout transaction (the amount out of the available
// balance into the payouts in transit), and the payout settles every available transaction of
// the currency no payout settled yet. Their nets sum to the amount (reconciliation), or
// nothing is written.
func PostPayout(ctx context.Context, tx Tx, p PayoutFacts) (*Transaction, error) {
	if p.Amount <= 0 {
		return nil, fmt.Errorf("ledger: payout %s of %d", p.PayoutID, p.Amount)
	}
	t, err := NewTransaction(p.Scope, p.Currency, TypePayout, -p.Amount, 0, p.PayoutID, "", p.At, p.At)
	if err != nil {
		return nil, err
	}
	if err := post(ctx, tx, p.Scope, p.At, []*Transaction{t}, nil); err != nil {
		return nil, err
	}
	sum, err := tx.Ledger().Settle(ctx, p.Scope, p.Currency, p.PayoutID)
	if err != nil {
		return nil, err
	}
	if sum != p.Amount {
		return nil, fmt.Errorf("ledger: payout %s of %d settles transactions summing to %d", p.PayoutID, p.Amount, sum)
	}
	return t, nil
}

// PostPayoutPaid records that a payout arrived: its amount leaves the payouts in transit for
// the merchant's bank (a "paid" entry of its transaction; no new balance transaction).
func PostPayoutPaid(ctx context.Context, tx Tx, p PayoutFacts) error {
	if p.Amount <= 0 || p.TransactionID == "" {
		return fmt.Errorf("ledger: payout %s paid: amount %d, transaction %q", p.PayoutID, p.Amount, p.TransactionID)
	}
	e := Entry{TransactionID: p.TransactionID, Kind: EntryPaid,
		Postings: []Posting{{Source: Payouts, Destination: World, Amount: p.Amount, Currency: p.Currency}}}
	return postEntries(ctx, tx, p.Scope, p.At, []Entry{e})
}

// ClearPayoutDue forgets scope's payout mark: the run took everything available.
func ClearPayoutDue(ctx context.Context, tx Tx, scope core.Scope) error {
	return tx.Ledger().ClearPayoutDue(ctx, scope)
}
