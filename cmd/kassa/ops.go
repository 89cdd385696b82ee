package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/identity"
)

// openDB parses the common --database-url flag plus the command's own flags.
func openDB(ctx context.Context, fs *flag.FlagSet, args []string) (*sqlx.DB, error) {
	url := fs.String("database-url", os.Getenv("KASSA_DATABASE_URL"), "PostgreSQL URL (env KASSA_DATABASE_URL)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *url == "" {
		return nil, fmt.Errorf("no database: set KASSA_DATABASE_URL or --database-url")
	}
	return postgres.Open(ctx, *url)
}

func migrate(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "up" && args[0] != "status") {
		return fmt.Errorf("usage: kassa migrate up|status")
	}
	db, err := openDB(ctx, flag.NewFlagSet("migrate", flag.ContinueOnError), args[1:])
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if args[0] == "up" {
		applied, err := postgres.MigrateUp(ctx, db)
		for _, a := range applied {
			fmt.Println("applied", a)
		}
		if err == nil {
			fmt.Printf("schema is current (%d applied now)\n", len(applied))
		}
		return err
	}
	st, err := postgres.Status(ctx, db)
	if err != nil {
		return err
	}
	for _, s := range st {
		state := "pending"
		if s.Applied {
			state = "applied"
		}
		fmt.Printf("%05d  %-8s %s\n", s.Version, state, s.Name)
	}
	return nil
}

func merchantCmd(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("usage: kassa merchant create --name N --country CC --email E [--onboarded] [--owner-password P]")
	}
	fs := flag.NewFlagSet("merchant create", flag.ContinueOnError)
	name := fs.String("name", "", "merchant name")
	country := fs.String("country", "", "ISO 3166 alpha-2 country, e.g. DE")
	email := fs.String("email", "", "contact e-mail; with --owner-password also the first dashboard login")
	onboarded := fs.Bool("onboarded", false, "allow live requests that move money")
	password := fs.String("owner-password", "", "password of the first dashboard user (10–200 characters)")
	db, err := openDB(ctx, fs, args[1:])
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	in := identity.MerchantInput{Name: *name, Country: *country, Email: *email, Onboarded: *onboarded}
	if *password != "" {
		in.OwnerPassword = password
	}
	ids, err := identityService(db)
	if err != nil {
		return err
	}
	m, testKey, liveKey, err := ids.CreateMerchant(ctx, in)
	if err != nil {
		return err
	}
	return printJSON(map[string]any{"id": m.ID(), "name": m.Name(), "country": m.Country(), "email": m.Email(),
		"onboarded": m.Onboarded(), "test_key": testKey, "live_key": liveKey})
}

func keyCmd(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "revoke") {
		return fmt.Errorf("usage: kassa key create --merchant mer_… --name N --mode test|live | kassa key revoke --key key_…")
	}
	fs := flag.NewFlagSet("key "+args[0], flag.ContinueOnError)
	merchant := fs.String("merchant", "", "merchant id (mer_…)")
	name := fs.String("name", "", "key name")
	mode := fs.String("mode", "test", "test or live")
	keyID := fs.String("key", "", "key id (key_…) to revoke")
	db, err := openDB(ctx, fs, args[1:])
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	ids, err := identityService(db)
	if err != nil {
		return err
	}
	if args[0] == "revoke" {
		k, err := ids.RevokeKey(ctx, *keyID)
		if err != nil {
			return err
		}
		return printJSON(map[string]any{"id": k.ID(), "revoked_at": k.RevokedAt().Unix()})
	}
	k, secret, err := ids.CreateKey(ctx, *merchant, *name, core.Environment(*mode))
	if err != nil {
		return err
	}
	return printJSON(map[string]any{"id": k.ID(), "name": k.Name(), "mode": k.Env(), "secret": secret})
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// identityService is all the operator subcommands (merchant, key) need: merchants and keys,
// without the rest of the server (checkout would want its public URL, payments a processor).
func identityService(db *sqlx.DB) (*identity.Service, error) {
	return identity.NewService(postgres.NewIdentityStore(db), core.SystemClock{})
}
