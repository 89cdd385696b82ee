package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/signing"
)

// errNoWebhookKey is the refusal of a production start without a sealing key.
var errNoWebhookKey = errors.New("no webhook secret key: webhook signing secrets must be sealed at rest. " +
	"Create a key with `kassa webhook-key generate` and set it as KASSA_WEBHOOK_SECRET_KEY (or --webhook-secret-key); " +
	"for development, start with --dev (make run does), which keeps a local key in a file")

// webhookStore is the webhook store every part shares: the worker, the dashboard API and the
// demo. Signing secrets are sealed at rest with KASSA_WEBHOOK_SECRET_KEY (AES-256-GCM), a
// comma-separated ring whose first key seals and whose every key opens. Without a key a
// production start is refused; --dev uses a local key kept in a file (devKeyFile). At start-up
// every secret stored in clear or under an older key is sealed under the current key.
func webhookStore(ctx context.Context, log *slog.Logger, a *app, cfg config) (*postgres.WebhookStore, error) {
	keys, err := signing.ParseKeys(cfg.WebhookKey)
	if err != nil {
		return nil, fmt.Errorf("KASSA_WEBHOOK_SECRET_KEY: %w", err)
	}
	if len(keys) == 0 {
		if !cfg.Dev {
			return nil, errNoWebhookKey
		}
		path, err := devKeyFile()
		if err != nil {
			return nil, err
		}
		key, created, err := loadOrCreateKey(path)
		if err != nil {
			return nil, fmt.Errorf("development webhook secret key: %w", err)
		}
		log.Warn("development mode: webhook secrets are sealed with a local key kept in a file; set KASSA_WEBHOOK_SECRET_KEY in production",
			"key_file", path, "created", created)
		keys = [][]byte{key}
	}
	box, err := signing.NewBox(keys[0], keys[1:]...)
	if err != nil {
		return nil, err
	}
	store := postgres.NewWebhookStore(a.db, box)
	rep, err := store.ResealSecrets(ctx)
	if err != nil {
		return nil, err
	}
	if rep.Resealed > 0 {
		log.Info("webhook secrets sealed under the current key (they were in clear or under an older key)", "endpoints", rep.Resealed)
	}
	if rep.Unreadable > 0 {
		log.Error("webhook secrets that no configured key opens: KASSA_WEBHOOK_SECRET_KEY is missing the key they were sealed with. "+
			"Their endpoints are not sent to until the key is added (as an older key: \"new,old\") or their secrets are rotated",
			"endpoints", rep.Unreadable)
	}
	return store, nil
}

// devKeyFile is where --dev keeps its key: kassa/dev-webhook-secret.key under the user's
// configuration directory ($XDG_CONFIG_HOME or ~/.config on Linux), else .kassa/ in the
// working directory (git-ignored in the repository).
func devKeyFile() (string, error) {
	if dir, err := os.UserConfigDir(); err == nil {
		return filepath.Join(dir, "kassa", "dev-webhook-secret.key"), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, ".kassa", "dev-webhook-secret.key"), nil
}

// loadOrCreateKey reads the key kept in path, or creates the file (mode 0600) with a new key.
func loadOrCreateKey(path string) (key []byte, created bool, err error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the path is devKeyFile's fixed name under the user's config directory, not input
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, false, err
		}
		//nolint:gosec // G304: the same fixed path
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) { // another process created it meanwhile
			return loadOrCreateKey(path)
		}
		if err != nil {
			return nil, false, err
		}
		s := signing.NewKey()
		if _, err := io.WriteString(f, s+"\n"); err != nil {
			// The write error is the one to report; a half-written file would be refused as
			// "not a key" at the next start, so it goes.
			_ = f.Close()
			_ = os.Remove(path)
			return nil, false, err
		}
		if err := f.Close(); err != nil {
			return nil, false, err
		}
		key, err := signing.ParseKey(s)
		return key, true, err
	}
	if err != nil {
		return nil, false, err
	}
	key, err = signing.ParseKey(strings.TrimSpace(string(b)))
	if err == nil && key == nil {
		err = errors.New("the file is empty")
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: not a key (%w); delete the file to get a new one (secrets sealed with it are then lost)", path, err)
	}
	return key, false, nil
}

// webhookKeyCmd is `kassa webhook-key generate`: it prints a new random sealing key for
// KASSA_WEBHOOK_SECRET_KEY.
func webhookKeyCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 || args[0] != "generate" {
		return fmt.Errorf("usage: kassa webhook-key generate")
	}
	fmt.Fprintln(stdout, signing.NewKey())
	fmt.Fprintln(stderr, `Set it as KASSA_WEBHOOK_SECRET_KEY. To rotate, put the new key first and keep the old one after a comma ("new,old") for one start: secrets are re-sealed under the new key at start-up, after which the old key can be removed.`)
	return nil
}
