package postgres_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

func migration(sql string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("-- +goose Up\n" + sql + "\n-- +goose Down\nSELECT 1;\n")}
}

// A database that has migration 3 but not 2 is refused: migrations apply strictly in order, and
// the newcomer numbered below the applied ones is not run behind the others' backs.
func TestMigrationsApplyStrictlyInOrder(t *testing.T) {
	ctx := context.Background()
	url, drop, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Skipf("no database: %v", err)
	}
	t.Cleanup(drop)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	first := fstest.MapFS{
		"00001_one.sql":   migration("CREATE TABLE one (id int);"),
		"00003_three.sql": migration("CREATE TABLE three (id int);"),
	}
	if _, err := postgres.MigrateUpFS(ctx, db, first); err != nil {
		t.Fatalf("first migration run: %v", err)
	}
	later := fstest.MapFS{
		"00001_one.sql":   first["00001_one.sql"],
		"00002_two.sql":   migration("CREATE TABLE two (id int);"),
		"00003_three.sql": first["00003_three.sql"],
	}
	applied, err := postgres.MigrateUpFS(ctx, db, later)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("migrating a database that lacks 00002 but has 00003: applied %v, err %v; want a missing-migration error", applied, err)
	}
	var two *string
	if err := db.GetContext(ctx, &two, "SELECT to_regclass('two')::text"); err != nil {
		t.Fatal(err)
	}
	if two != nil {
		t.Fatal("the out-of-order migration 00002 was applied")
	}

	// In order, the same migrations apply.
	url2, drop2, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop2)
	db2, err := postgres.Open(ctx, url2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	if applied, err := postgres.MigrateUpFS(ctx, db2, later); err != nil || len(applied) != 3 {
		t.Fatalf("in order: applied %v, err %v", applied, err)
	}
}
