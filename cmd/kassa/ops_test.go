package main

import (
	"context"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// The operator subcommands run on a database alone: `kassa merchant create` and `kassa key`
// panicked once they wired the whole server (checkout refuses to start without its public
// URL, which these commands have no reason to know).
func TestMerchantAndKeyCommandsNeedOnlyTheDatabase(t *testing.T) {
	ctx := context.Background()
	db, url := pgtest.NewWithURL(t)
	if err := merchantCmd(ctx, []string{"create", "--database-url", url, "--name", "Ops", "--country", "DE",
		"--email", "ops@example.com", "--owner-password", "correct-horse-battery"}); err != nil {
		t.Fatalf("merchant create: %v", err)
	}
	var merchant string
	if err := db.GetContext(ctx, &merchant, `SELECT id FROM merchants`); err != nil {
		t.Fatal(err)
	}
	if err := keyCmd(ctx, []string{"create", "--database-url", url, "--merchant", merchant, "--name", "ci", "--mode", "test"}); err != nil {
		t.Fatalf("key create: %v", err)
	}
	var key string
	if err := db.GetContext(ctx, &key, `SELECT id FROM api_keys WHERE name = 'ci'`); err != nil {
		t.Fatal(err)
	}
	if err := keyCmd(ctx, []string{"revoke", "--database-url", url, "--key", key}); err != nil {
		t.Fatalf("key revoke: %v", err)
	}
}
