package postgres_test

import (
	"context"
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

// Inside a unit of work, Remember leaves the transaction's commit synchronous: its
// asynchronous commit is only for the implicit transaction of its own statement.
func TestSandboxJournalInUnitOfWorkCommitsSynchronously(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	j := postgres.NewSandboxJournal(db)
	uow := postgres.NewUnitOfWork(db)
	scope := core.Scope{MerchantID: "mer_journal", Env: core.EnvTest}
	var setting string
	err := uow.Do(ctx, func(ctx context.Context) error {
		if _, err := j.Remember(ctx, scope, "cs_2:1", ports.ChargeResult{Outcome: ports.OutcomeSucceeded, ProcessorRef: "ch_x"}); err != nil {
			return err
		}
		return postgres.AmbientGet(ctx, &setting, `SHOW synchronous_commit`)
	})
	if err != nil {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Fatalf("synchronous_commit in the unit of work after Remember = %q, want on", setting)
	}
}
