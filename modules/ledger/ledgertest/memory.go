// Package ledgertest holds an in-memory ledger repository for the fakes of modules that post
// (payments' fake unit of work) and for the ledger's own tests.
package ledgertest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
)

// Memory is ledger.Repository in memory. It is not safe for concurrent use: the fake that holds
// it serialises its units of work, and saves and restores it around a failed one (Save,
// Restore).
type Memory struct {
	Balances     map[ledger.BalanceKey]int64
	Transactions []ledger.TransactionSnapshot
	Postings     []ledger.Entry
	Releases     []ledger.Due
}

// NewMemory returns an empty ledger.
func NewMemory() *Memory { return &Memory{Balances: map[ledger.BalanceKey]int64{}} }

// Save returns a copy of the state.
func (m *Memory) Save() Memory {
	return Memory{Balances: maps.Clone(m.Balances), Transactions: slices.Clone(m.Transactions),
		Postings: slices.Clone(m.Postings), Releases: slices.Clone(m.Releases)}
}

// Restore puts back a state Save returned.
func (m *Memory) Restore(s Memory) { *m = s }

// LockBalances answers the balances of keys (zero for new ones).
func (m *Memory) LockBalances(_ context.Context, keys []ledger.BalanceKey) (map[ledger.BalanceKey]int64, error) {
	if !sort.SliceIsSorted(keys, func(i, j int) bool { return keys[i].Less(keys[j]) }) {
		return nil, fmt.Errorf("ledgertest: balances locked out of order: %v", keys)
	}
	out := map[ledger.BalanceKey]int64{}
	for _, k := range keys {
		out[k] = m.Balances[k]
	}
	return out, nil
}

// Append writes j.
func (m *Memory) Append(_ context.Context, j ledger.Journal) error {
	for _, t := range j.Transactions {
		s := t.Snapshot()
		for _, o := range m.Transactions {
			if o.Scope == s.Scope && o.SourceID == s.SourceID && o.Type == s.Type {
				return fmt.Errorf("ledgertest: %s of %s: %w", s.Type, s.SourceID, ledger.ErrTransactionExists)
			}
		}
	}
	for _, t := range j.Transactions {
		s := t.Snapshot()
		m.Transactions = append(m.Transactions, s)
		if s.Status == ledger.StatusPending {
			m.Releases = append(m.Releases, ledger.Due{Scope: s.Scope, TransactionID: s.ID, Currency: s.Currency, Net: s.Net, AvailableOn: s.AvailableOn})
		}
	}
	for _, d := range j.Released {
		i := slices.IndexFunc(m.Releases, func(r ledger.Due) bool { return r.Scope == d.Scope && r.TransactionID == d.TransactionID })
		if i < 0 {
			return fmt.Errorf("ledgertest: release of %s is not queued", d.TransactionID)
		}
		m.Releases = slices.Delete(m.Releases, i, i+1)
	}
	m.Postings = append(m.Postings, j.Entries...)
	for k, v := range j.Balances {
		m.Balances[k] = v
	}
	return nil
}

// ClaimDue answers the releases due by until, earliest first.
func (m *Memory) ClaimDue(_ context.Context, scope *core.Scope, until time.Time, limit int) ([]ledger.Due, error) {
	var out []ledger.Due
	for _, d := range m.Releases {
		if (scope == nil || *scope == d.Scope) && !d.AvailableOn.After(until) {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AvailableOn.Before(out[j].AvailableOn) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

var _ ledger.Repository = (*Memory)(nil)

// ClaimPayoutDue answers no payout marks: the memory ledger keeps none (payouts are tested on
// PostgreSQL).
func (m *Memory) ClaimPayoutDue(context.Context, *core.Scope, []core.Environment, time.Time, int) ([]ledger.PayoutDue, error) {
	return nil, nil
}

// ClearPayoutDue does nothing (no marks are kept).
func (m *Memory) ClearPayoutDue(context.Context, core.Scope) error { return nil }

// Currencies lists the currencies of scope's available balances.
func (m *Memory) Currencies(_ context.Context, scope core.Scope) ([]core.Currency, error) {
	var out []core.Currency
	for k := range m.Balances {
		if k.Scope == scope && k.Account == ledger.Available && !slices.Contains(out, k.Currency) {
			out = append(out, k.Currency)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Settle is not kept in memory.
func (m *Memory) Settle(context.Context, core.Scope, core.Currency, string) (int64, error) {
	return 0, fmt.Errorf("ledgertest: payouts are not kept in memory")
}
