package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
)

const appUsage = `usage:
  kassa app create --name N --redirect-uri URL [--redirect-uri URL …] --scopes s1,s2 [--reviewed]
  kassa app install --app app_… --merchant mer_… [--scopes s1,s2]
  kassa app uninstall --installation <uuid>`

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// appCmd registers apps and installs or uninstalls them, directly on the database (the same
// use cases as the operator API).
func appCmd(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "install" && args[0] != "uninstall") {
		return fmt.Errorf("%s", appUsage)
	}
	fs := flag.NewFlagSet("app "+args[0], flag.ContinueOnError)
	name := fs.String("name", "", "app name merchants see")
	var redirects repeated
	fs.Var(&redirects, "redirect-uri", "OAuth redirect URI (repeatable)")
	scopes := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(apps.Scopes, ", "))
	reviewed := fs.Bool("reviewed", false, "the operator has reviewed the app (needed for payouts:read)")
	appID := fs.String("app", "", "app id (app_…)")
	merchant := fs.String("merchant", "", "merchant id (mer_…)")
	installation := fs.String("installation", "", "installation UUID")
	db, err := openDB(ctx, fs, args[1:])
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	// Only the apps store: the operator commands need none of the other modules.
	svc, err := apps.NewService(postgres.NewAppStore(db), core.SystemClock{})
	if err != nil {
		return err
	}
	var list []string
	if *scopes != "" {
		for _, s := range strings.Split(*scopes, ",") {
			list = append(list, strings.TrimSpace(s))
		}
	}
	switch args[0] {
	case "create":
		a, secret, err := svc.RegisterApp(ctx, apps.AppInput{Name: *name, RedirectURIs: redirects, Scopes: list, Reviewed: *reviewed})
		if err != nil {
			return err
		}
		return writeJSON(out, map[string]any{"id": a.ID(), "name": a.Name(), "client_id": a.ClientID(), "client_secret": secret,
			"redirect_uris": a.RedirectURIs(), "scopes": a.Scopes(), "reviewed": a.Reviewed()})
	case "install":
		i, tokens, err := svc.Install(ctx, *appID, *merchant, list)
		if err != nil {
			return err
		}
		return writeJSON(out, map[string]any{"installation": i.ID(), "app": i.AppID(), "merchant": i.MerchantID(),
			"scopes": i.Scopes(), "live_token": tokens.Live, "test_token": tokens.Test})
	default:
		i, err := svc.Uninstall(ctx, *installation)
		if err != nil {
			return err
		}
		return writeJSON(out, map[string]any{"installation": i.ID(), "revoked_at": i.RevokedAt().Unix()})
	}
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
