package sandbox

import (
	"context"
	"sync"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Journal is the sandbox's memory of the charges it answered, keyed by scope and idempotency
// key, as a live processor keeps its own records. With it a retried Charge answers exactly what
// the first call answered, and Lookup can tell the charge-attempt sweep what became of a charge
// whose outcome Kassa failed to record. The results hold no card number and no IBAN
// (ports.ChargeResult never carries them).
//
// Why a journal and not a pure function of the key: the outcome of a card charge depends on
// the number typed, which is never stored anywhere; only the processor's answer can be kept.
type Journal interface {
	// Remember stores res under key unless a result is stored already, and returns the stored
	// result (the first one wins, so concurrent calls with one key agree).
	Remember(ctx context.Context, scope core.Scope, key string, res ports.ChargeResult) (ports.ChargeResult, error)
	// Recall returns the result stored under key; ok is false when there is none.
	Recall(ctx context.Context, scope core.Scope, key string) (res ports.ChargeResult, ok bool, err error)
	// The refunds the sandbox made, remembered the same way.
	RefundJournal
}

// MemoryJournal is a Journal in the process's memory: for tests and single-process runs. The
// server uses a Postgres journal (adapters/postgres.SandboxJournal), which survives a restart.
type MemoryJournal struct {
	mu  sync.Mutex
	res map[journalKey]ports.ChargeResult
	*MemoryRefundJournal
}

type journalKey struct {
	scope core.Scope
	key   string
}

// NewMemoryJournal returns an empty in-memory journal.
func NewMemoryJournal() *MemoryJournal {
	return &MemoryJournal{res: map[journalKey]ports.ChargeResult{}, MemoryRefundJournal: NewMemoryRefundJournal()}
}

// Remember implements Journal.
func (j *MemoryJournal) Remember(_ context.Context, scope core.Scope, key string, res ports.ChargeResult) (ports.ChargeResult, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := journalKey{scope, key}
	if old, ok := j.res[k]; ok {
		return old, nil
	}
	j.res[k] = res
	return res, nil
}

// Recall implements Journal.
func (j *MemoryJournal) Recall(_ context.Context, scope core.Scope, key string) (ports.ChargeResult, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	res, ok := j.res[journalKey{scope, key}]
	return res, ok, nil
}

// RefundJournal is the sandbox's memory of the refunds it made, keyed by scope and idempotency
// key (the refund's id), as a live processor keeps its own: a retried Refund answers what the
// first call answered and moves nothing more, and LookupRefund tells the refund sweep what
// became of a refund whose outcome Kassa failed to record.
type RefundJournal interface {
	// RememberRefund stores res under key unless a result is stored already, and returns the
	// stored result (the first one wins).
	RememberRefund(ctx context.Context, scope core.Scope, key string, res ports.RefundResult) (ports.RefundResult, error)
	// RecallRefund returns the result stored under key; ok is false when there is none.
	RecallRefund(ctx context.Context, scope core.Scope, key string) (res ports.RefundResult, ok bool, err error)
}

// MemoryRefundJournal is a RefundJournal in the process's memory (tests).
type MemoryRefundJournal struct {
	mu  sync.Mutex
	res map[journalKey]ports.RefundResult
}

// NewMemoryRefundJournal returns an empty in-memory refund journal.
func NewMemoryRefundJournal() *MemoryRefundJournal {
	return &MemoryRefundJournal{res: map[journalKey]ports.RefundResult{}}
}

// RememberRefund implements RefundJournal.
func (j *MemoryRefundJournal) RememberRefund(_ context.Context, scope core.Scope, key string, res ports.RefundResult) (ports.RefundResult, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := journalKey{scope, key}
	if old, ok := j.res[k]; ok {
		return old, nil
	}
	j.res[k] = res
	return res, nil
}

// RecallRefund implements RefundJournal.
func (j *MemoryRefundJournal) RecallRefund(_ context.Context, scope core.Scope, key string) (ports.RefundResult, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	res, ok := j.res[journalKey{scope, key}]
	return res, ok, nil
}
