package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/adapters/signing"
)

// A production start (no --dev) without KASSA_WEBHOOK_SECRET_KEY is refused with a message
// that says how to get a key; a malformed key is refused naming the variable.
func TestServeRefusesNoWebhookKey(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, err := webhookStore(context.Background(), log, nil, config{})
	if !errors.Is(err, errNoWebhookKey) || !strings.Contains(err.Error(), "kassa webhook-key generate") {
		t.Fatalf("no key: %v", err)
	}
	_, err = webhookStore(context.Background(), log, nil, config{WebhookKey: signing.NewKey() + ",short"})
	if err == nil || !strings.Contains(err.Error(), "KASSA_WEBHOOK_SECRET_KEY") {
		t.Fatalf("bad key: %v", err)
	}
}

// --dev keeps one key in a file: created once (mode 0600), read back on every start.
func TestDevKeyFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, err := devKeyFile()
	if err != nil || !strings.HasSuffix(path, filepath.Join("kassa", "dev-webhook-secret.key")) {
		t.Fatalf("key file %q, %v", path, err)
	}
	k1, created, err := loadOrCreateKey(path)
	if err != nil || !created || len(k1) != signing.KeySize {
		t.Fatalf("first start: %d bytes, created %v, %v", len(k1), created, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", st.Mode(), err)
	}
	k2, created, err := loadOrCreateKey(path)
	if err != nil || created || !bytes.Equal(k1, k2) {
		t.Fatalf("second start: created %v, same key %v, %v", created, bytes.Equal(k1, k2), err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("garbage key file: %v", err)
	}
	// An empty file (a start that died before writing) says so, not "not a key (<nil>)".
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "empty") || strings.Contains(err.Error(), "nil") {
		t.Fatalf("empty key file: %v", err)
	}
}

func TestWebhookKeyGenerate(t *testing.T) {
	var out, msg bytes.Buffer
	if err := webhookKeyCmd([]string{"generate"}, &out, &msg); err != nil {
		t.Fatal(err)
	}
	if k, err := signing.ParseKey(strings.TrimSpace(out.String())); err != nil || len(k) != signing.KeySize {
		t.Fatalf("printed %q: %v", out.String(), err)
	}
	if !strings.Contains(msg.String(), "KASSA_WEBHOOK_SECRET_KEY") {
		t.Errorf("no hint: %s", msg.String())
	}
	if err := webhookKeyCmd(nil, &out, &msg); err == nil {
		t.Error("no subcommand accepted")
	}
}

// --demo implies --dev, and --dev the development flag of webhook destinations.
func TestDevFlags(t *testing.T) {
	for _, args := range [][]string{{"--demo"}, {"--dev"}} {
		var c config
		if err := c.parse(flag.NewFlagSet("serve", flag.ContinueOnError), append(args, "--database-url", "postgres://x")); err != nil {
			t.Fatal(err)
		}
		if !c.Dev || !c.WebhookLAN {
			t.Errorf("%v: dev %v, allow private %v", args, c.Dev, c.WebhookLAN)
		}
	}
	var c config
	t.Setenv("KASSA_DEV", "")
	t.Setenv("KASSA_DEMO", "")
	t.Setenv("KASSA_WEBHOOK_ALLOW_PRIVATE", "")
	if err := c.parse(flag.NewFlagSet("serve", flag.ContinueOnError), []string{"--database-url", "postgres://x"}); err != nil {
		t.Fatal(err)
	}
	if c.Dev || c.WebhookLAN {
		t.Errorf("default: dev %v, allow private %v", c.Dev, c.WebhookLAN)
	}
}
