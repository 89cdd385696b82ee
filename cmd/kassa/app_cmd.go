package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

const appUsage = `usage:
  kassa app create --name N --redirect-uri URL [--redirect-uri URL …] --scopes s1,s2 [--reviewed]
  kassa app install --app app_… --merchant mer_… [--scopes s1,s2]
  kassa app uninstall --installation <uuid>
  kassa app endpoint --app app_… --url URL --events e1,e2 [--description D]
  kassa app endpoints --app app_…

endpoint registers an app webhook endpoint and prints its signing secret once; the secret is
sealed with the server's key, read from KASSA_WEBHOOK_SECRET_KEY (or --webhook-secret-key).`

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// appCmd registers apps and installs or uninstalls them, directly on the database (the same
// use cases as the operator API).
func appCmd(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || !slices.Contains([]string{"create", "install", "uninstall", "endpoint", "endpoints"}, args[0]) {
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
	hookURL := fs.String("url", "", "app webhook endpoint URL")
	events := fs.String("events", "", "comma-separated app events: exact names, * or prefix.*")
	description := fs.String("description", "", "a note on the endpoint")
	sealKey := fs.String("webhook-secret-key", os.Getenv("KASSA_WEBHOOK_SECRET_KEY"), "the server's key that seals webhook secrets (env KASSA_WEBHOOK_SECRET_KEY)")
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
	case "endpoint", "endpoints":
		return appEndpointCmd(ctx, out, db, svc, args[0], *appID, *sealKey, webhooks.AppEndpointParams{
			URL: *hookURL, Events: splitList(*events), Description: *description})
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

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// appEndpointCmd registers an app webhook endpoint (endpoint) or lists the app's (endpoints),
// with the same use cases as the operator API. The secret is sealed with the server's key.
func appEndpointCmd(ctx context.Context, out io.Writer, db *sqlx.DB, svc *apps.Service, cmd, appID, sealKey string, p webhooks.AppEndpointParams) error {
	keys, err := signing.ParseKeys(sealKey)
	if err != nil {
		return fmt.Errorf("KASSA_WEBHOOK_SECRET_KEY: %w", err)
	}
	if len(keys) == 0 {
		return errors.New("set KASSA_WEBHOOK_SECRET_KEY (or --webhook-secret-key) to the server's key: app endpoint secrets are sealed with it")
	}
	box, err := signing.NewBox(keys[0], keys[1:]...)
	if err != nil {
		return err
	}
	if _, err := svc.GetApp(ctx, appID); err != nil {
		return err
	}
	// The URL rules of the server's default (public addresses only); a development server
	// that allows private addresses takes those through the operator API.
	hooks, err := webhooks.NewAppService(postgres.NewWebhookStore(db, box), core.SystemClock{}, webhooks.Destinations{})
	if err != nil {
		return err
	}
	if cmd == "endpoints" {
		list, err := hooks.ListEndpoints(ctx, appID)
		if err != nil {
			return err
		}
		rows := make([]map[string]any, 0, len(list))
		for _, e := range list {
			rows = append(rows, map[string]any{"id": e.ID, "url": e.URL, "events": e.Events, "description": e.Description})
		}
		return writeJSON(out, rows)
	}
	e, err := hooks.CreateEndpoint(ctx, appID, p)
	if err != nil {
		return err
	}
	return writeJSON(out, map[string]any{"id": e.ID, "app": e.AppID, "url": e.URL, "events": e.Events, "secret": e.Secret})
}
