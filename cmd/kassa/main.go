// Command kassa is Kassa's single binary: `kassa serve` runs the three listeners, `kassa
// migrate` manages the schema, and the operator commands (`kassa merchant create`, `kassa key
// create|revoke`, `kassa app create|install|uninstall`) talk to the database directly.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `kassa: self-hosted payments, subscriptions and catalog

Usage:
  kassa serve [flags]                      run the API, checkout and dashboard listeners
  kassa migrate up|status [flags]          apply or list database migrations
  kassa merchant create --name N --country CC --email E [--onboarded] [--owner-password P]
  kassa key create --merchant mer_… --name N --mode test|live
  kassa key revoke --key key_…
  kassa app create --name N --redirect-uri URL --scopes s1,s2 [--reviewed]
  kassa app install --app app_… --merchant mer_… [--scopes s1,s2]
  kassa app uninstall --installation <uuid>
  kassa webhook-key generate               print a new key for KASSA_WEBHOOK_SECRET_KEY
  kassa listen [--addr 127.0.0.1:4000] [--secret whsec_…]
                                           receive webhooks locally and verify their signatures

Every command but listen and webhook-key reads KASSA_DATABASE_URL (or --database-url). Run "kassa serve -h" for all settings.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kassa:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Print(usage)
		return nil
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serve(ctx, rest)
	case "migrate":
		return migrate(ctx, rest)
	case "merchant":
		return merchantCmd(ctx, rest)
	case "key":
		return keyCmd(ctx, rest)
	case "app":
		return appCmd(ctx, rest, os.Stdout)
	case "webhook-key":
		return webhookKeyCmd(rest, os.Stdout, os.Stderr)
	case "listen":
		return listen(ctx, rest, os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
	}
}
