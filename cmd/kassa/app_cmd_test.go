package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
)

// The operator registers an app, installs it and uninstalls it with the CLI; the tokens it
// prints authenticate until the uninstall.
func TestAppCommandRegistersInstallsAndUninstalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := pgtest.NewWithURL(t)
	merchant := pgtest.Merchant(t, db).MerchantID
	run := func(args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := appCmd(ctx, append(args, "--database-url", url), &out); err != nil {
			t.Fatalf("kassa app %s: %v", strings.Join(args, " "), err)
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("output: %v: %s", err, out.String())
		}
		return v
	}
	if err := appCmd(ctx, []string{"create", "--name", "x", "--redirect-uri", "https://a.example/cb", "--scopes", "payouts:read", "--database-url", url}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "reviewed") {
		t.Fatalf("payouts:read unreviewed: %v", err)
	}
	app := run("create", "--name", "Bookkeeper", "--redirect-uri", "https://a.example/cb", "--redirect-uri", "http://127.0.0.1:9000/cb", "--scopes", "payments:read, merchant:read")
	if !strings.HasPrefix(app["id"].(string), "app_") || !strings.HasPrefix(app["client_secret"].(string), "cs_app_") || len(app["redirect_uris"].([]any)) != 2 {
		t.Fatalf("app: %v", app)
	}
	inst := run("install", "--app", app["id"].(string), "--merchant", merchant)
	if !regexp.MustCompile(`^at_live_[0-9A-Za-z]{40}$`).MatchString(inst["live_token"].(string)) || !regexp.MustCompile(`^at_test_[0-9A-Za-z]{40}$`).MatchString(inst["test_token"].(string)) {
		t.Fatalf("installation: %v", inst)
	}
	svc, err := apps.NewService(postgres.NewAppStore(db), core.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, "Bearer "+inst["test_token"].(string)); err != nil {
		t.Fatalf("the printed token does not authenticate: %v", err)
	}
	run("uninstall", "--installation", inst["installation"].(string))
	if _, err := svc.Authenticate(ctx, "Bearer "+inst["test_token"].(string)); err == nil {
		t.Fatal("the token still authenticates after the uninstall")
	}
}

// The operator registers an app webhook endpoint with the CLI: the secret is printed once and
// sealed with the server's key; a bad event or no key is refused.
func TestAppCommandRegistersWebhookEndpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, url := pgtest.NewWithURL(t)
	key := strings.Repeat("ab", 32)
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := appCmd(ctx, append(args, "--database-url", url), &out)
		return out.String(), err
	}
	out, err := run("create", "--name", "Hooks", "--redirect-uri", "https://a.example/cb", "--scopes", "payments:read")
	if err != nil {
		t.Fatal(err)
	}
	var app map[string]any
	_ = json.Unmarshal([]byte(out), &app)
	id := app["id"].(string)
	if _, err := run("endpoint", "--app", id, "--url", "https://a.example/hooks", "--events", "checkout.*"); err == nil {
		t.Fatal("no sealing key: accepted")
	}
	if _, err := run("endpoint", "--app", id, "--url", "https://a.example/hooks", "--events", "charge.refunded", "--webhook-secret-key", key); err == nil {
		t.Fatal("an event outside the app catalog: accepted")
	}
	out, err = run("endpoint", "--app", id, "--url", "https://a.example/hooks", "--events", "checkout.*, payment_intent.succeeded", "--webhook-secret-key", key)
	if err != nil {
		t.Fatal(err)
	}
	var ep map[string]any
	_ = json.Unmarshal([]byte(out), &ep)
	if !strings.HasPrefix(ep["secret"].(string), "whsec_") || !strings.HasPrefix(ep["id"].(string), "we_") || len(ep["events"].([]any)) != 2 {
		t.Fatalf("endpoint: %s", out)
	}
	out, err = run("endpoints", "--app", id, "--webhook-secret-key", key)
	if err != nil || !strings.Contains(out, ep["id"].(string)) || strings.Contains(out, "whsec_") {
		t.Fatalf("endpoints: %v %s", err, out)
	}
}
