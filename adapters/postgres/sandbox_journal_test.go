package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Remember keeps the first answer stored under a key and returns it to every later call, in
// one statement; Recall reads it back.
func TestSandboxJournalFirstAnswerWins(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	j := postgres.NewSandboxJournal(db)
	scope := core.Scope{MerchantID: "mer_journal", Env: core.EnvTest}
	first := ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: "ch_first"}
	got, err := j.Remember(ctx, scope, "cs_1:1", first)
	if err != nil || got.ProcessorRef != "ch_first" {
		t.Fatalf("first Remember: %+v, %v", got, err)
	}
	got, err = j.Remember(ctx, scope, "cs_1:1", ports.ChargeResult{Outcome: ports.OutcomeFailed, ProcessorRef: "ch_second"})
	if err != nil || got.ProcessorRef != "ch_first" || got.Outcome != ports.OutcomeSucceeded {
		t.Fatalf("second Remember answered %+v, %v; want the first answer", got, err)
	}
	if got, ok, err := j.Recall(ctx, scope, "cs_1:1"); err != nil || !ok || got.ProcessorRef != "ch_first" {
		t.Fatalf("Recall: %+v, %v, %v", got, ok, err)
	}
	other := core.Scope{MerchantID: "mer_journal", Env: core.EnvLive}
	if _, ok, err := j.Recall(ctx, other, "cs_1:1"); err != nil || ok {
		t.Fatalf("Recall in another scope: %v, %v; want nothing", ok, err)
	}
}

// The journal is a store: called inside a unit of work it does not join the transaction. Its
// row commits on its own (a unit of work that rolls back keeps it), and the transaction's
// commit stays synchronous.
func TestSandboxJournalNeverJoinsAUnitOfWork(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	j := postgres.NewSandboxJournal(db)
	uow := postgres.NewUnitOfWork(db)
	scope := core.Scope{MerchantID: "mer_journal", Env: core.EnvTest}
	var setting string
	boom := errors.New("boom")
	err := uow.Do(ctx, func(ctx context.Context) error {
		if _, err := j.Remember(ctx, scope, "cs_2:1", ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: "ch_x"}); err != nil {
			return err
		}
		if err := postgres.AmbientGet(ctx, &setting, `SHOW synchronous_commit`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Fatalf("synchronous_commit in the unit of work after Remember = %q, want on", setting)
	}
	if got, ok, err := j.Recall(ctx, scope, "cs_2:1"); err != nil || !ok || got.ProcessorRef != "ch_x" {
		t.Fatalf("the journal's row after the unit of work rolled back: %+v %v %v", got, ok, err)
	}
}
