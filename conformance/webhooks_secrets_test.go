package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// Webhook signing secrets at rest (issue 11 §2): a production server does not start without a
// sealing key; --dev keeps a local key in a file; a missing or wrong key leaves the webhook
// pages and the overview working and saying what is wrong; a key ring ("new,old") re-seals
// every secret under the new key at start-up, after which the old key can be dropped. Every
// case starts servers of its own on a fresh database (a server with another key would fail
// the suite's deliveries).

// keyEnv is hookServerEnv with the given webhook secret key ("" = none) and more settings.
func keyEnv(key string, more ...string) map[string]string {
	env := map[string]string{"KASSA_WEBHOOK_SECRET_KEY": key}
	for k, v := range hookServerEnv {
		env[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		env[more[i]] = more[i+1]
	}
	return env
}

func TestWebhookSecretKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	test := dash.DashboardEnvironmentTest

	harness.Rule(t, "WH", "a production start without KASSA_WEBHOOK_SECRET_KEY is refused with a message saying how to make a key; --dev starts with a local key kept in a file it names, and opens the same secrets on the next start", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs servers the harness starts")
		}
		_, err := target.Sibling(ctx, "webhook-key-missing", harness.Options{Env: keyEnv("")})
		if err == nil || !strings.Contains(err.Error(), "no webhook secret key") || !strings.Contains(err.Error(), "kassa webhook-key generate") {
			t.Fatalf("start without a key: %v", err)
		}

		cfgDir := t.TempDir()
		devEnv := keyEnv("", "KASSA_DEV", "true", "XDG_CONFIG_HOME", cfgDir)
		first, drop, err := target.Lone(ctx, "webhook-key-dev-1", harness.Options{Env: devEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop)
		keyFile := filepath.Join(cfgDir, "kassa", "dev-webhook-secret.key")
		b, err := os.ReadFile(keyFile)
		if err != nil {
			first.Stop()
			t.Fatalf("--dev kept no key file: %v", err)
		}
		if k, err := signing.ParseKey(strings.TrimSpace(string(b))); err != nil || len(k) != signing.KeySize {
			t.Fatalf("key file holds %q: %v", b, err)
		}
		o := newDashOwnerAt(t, first)
		rc := newHookReceiver(t, nil)
		ep := hookEndpoint(t, o, test, rc.URL)
		first.Stop()
		if log, _ := os.ReadFile(first.LogPath); !strings.Contains(string(log), keyFile) {
			t.Errorf("the start-up log does not say where the development key is (%s)", keyFile)
		}

		second, err := first.Sibling(ctx, "webhook-key-dev-2", harness.Options{Env: devEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		o = o.at(t, second)
		sent, err := o.Client.SendWebhookTestEventWithResponse(ctx, test, ep.Id)
		if err != nil {
			t.Fatal(err)
		}
		if sent.JSON202 == nil {
			t.Fatalf("test event after a restart with the kept key: %d %s", sent.StatusCode(), sent.Body)
		}
		h := rc.waitFor(t, 1, hookWait, nil)[0]
		if !hookSignedBy(t, h, ep.Secret) {
			t.Fatal("the delivery is not signed with the endpoint's secret")
		}
	})

	harness.Rule(t, "WH", "with a wrong key the webhook pages and the overview keep working and mark the endpoint secret_unavailable; a test event is 422 webhook_secret_unavailable; rotating recovers; the ring \"new,old\" re-seals every secret so the new key alone opens them", func(t *testing.T) {
		t.Parallel()
		if !target.CanLaunchSiblings() {
			t.Skip("needs servers the harness starts")
		}
		oldKey, newKey := harness.SuiteSecretKey, signing.NewKey()
		first, drop, err := target.Lone(ctx, "webhook-key-ring-1", harness.Options{Env: keyEnv(oldKey)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(drop)
		o := newDashOwnerAt(t, first)
		rc := newHookReceiver(t, nil)
		kept := hookEndpoint(t, o, test, rc.URL+"/kept")
		lost := hookEndpoint(t, o, test, rc.URL+"/lost")
		first.Stop()

		// The new key alone: the secrets sealed under the old one do not open.
		wrong, err := first.Sibling(ctx, "webhook-key-ring-wrong", harness.Options{Env: keyEnv(newKey)})
		if err != nil {
			t.Fatal(err)
		}
		w := o.at(t, wrong)
		list, err := w.Client.ListWebhookEndpointsWithResponse(ctx, test)
		if err != nil {
			t.Fatal(err)
		}
		if list.JSON200 == nil || len(list.JSON200.Data) != 2 || !list.JSON200.Data[0].SecretUnavailable || !list.JSON200.Data[1].SecretUnavailable {
			t.Fatalf("list under a wrong key: %d %s", list.StatusCode(), list.Body)
		}
		get, err := w.Client.GetWebhookEndpointWithResponse(ctx, test, kept.Id)
		if err != nil {
			t.Fatal(err)
		}
		if get.JSON200 == nil || !get.JSON200.SecretUnavailable {
			t.Fatalf("get under a wrong key: %d %s", get.StatusCode(), get.Body)
		}
		ov, err := w.Client.GetOverviewWithResponse(ctx, test)
		if err != nil {
			t.Fatal(err)
		}
		if ov.JSON200 == nil {
			t.Fatalf("overview under a wrong key: %d %s", ov.StatusCode(), ov.Body)
		}
		prods, err := w.Client.ListProductsWithResponse(ctx, test, nil)
		if err != nil {
			t.Fatal(err)
		}
		if prods.JSON200 == nil {
			t.Fatalf("products under a wrong key: %d %s", prods.StatusCode(), prods.Body)
		}
		sent, err := w.Client.SendWebhookTestEventWithResponse(ctx, test, kept.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, sent, sent.HTTPResponse, sent.Body, 422, "invalid_state", "webhook_secret_unavailable", "")
		if !strings.Contains(string(sent.Body), "KASSA_WEBHOOK_SECRET_KEY") {
			t.Errorf("the error does not say which setting is wrong: %s", sent.Body)
		}
		// Rotating gives the lost endpoint a new secret, usable at once.
		rot, err := w.Client.RotateWebhookEndpointSecretWithResponse(ctx, test, lost.Id)
		if err != nil {
			t.Fatal(err)
		}
		if rot.JSON200 == nil || rot.JSON200.SecretUnavailable || rot.JSON200.PreviousSecretExpiresAt != nil {
			t.Fatalf("rotate under a wrong key: %d %s", rot.StatusCode(), rot.Body)
		}
		if sent, err := w.Client.SendWebhookTestEventWithResponse(ctx, test, lost.Id); err != nil || sent.JSON202 == nil {
			t.Fatalf("test event after rotation: %v %d %s", err, sent.StatusCode(), sent.Body)
		}
		h := rc.waitFor(t, 1, hookWait, func(h hookHit) bool { return strings.Contains(string(h.Body), lost.Id) })[0]
		if !hookSignedBy(t, h, rot.JSON200.Secret) {
			t.Fatal("the delivery after rotation is not signed with the new secret")
		}
		wrong.Stop()

		// The ring "new,old" re-seals at start-up; then the new key alone opens everything.
		ring, err := first.Sibling(ctx, "webhook-key-ring-both", harness.Options{Env: keyEnv(newKey + "," + oldKey)})
		if err != nil {
			t.Fatal(err)
		}
		ring.Stop()
		if log, _ := os.ReadFile(ring.LogPath); !strings.Contains(string(log), "webhook secrets sealed under the current key") {
			t.Errorf("the ring's start-up log does not report the re-seal")
		}
		after, err := first.Sibling(ctx, "webhook-key-ring-new", harness.Options{Env: keyEnv(newKey)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(after.Stop)
		a := o.at(t, after)
		get, err = a.Client.GetWebhookEndpointWithResponse(ctx, test, kept.Id)
		if err != nil {
			t.Fatal(err)
		}
		if get.JSON200 == nil || get.JSON200.SecretUnavailable {
			t.Fatalf("after the re-seal, the new key alone: %d %s", get.StatusCode(), get.Body)
		}
		if sent, err := a.Client.SendWebhookTestEventWithResponse(ctx, test, kept.Id); err != nil || sent.JSON202 == nil {
			t.Fatalf("test event after the re-seal: %v %d %s", err, sent.StatusCode(), sent.Body)
		}
		h = rc.waitFor(t, 1, hookWait, func(h hookHit) bool { return strings.Contains(string(h.Body), kept.Id) })[0]
		if !hookSignedBy(t, h, kept.Secret) {
			t.Fatal("the re-sealed secret is not the endpoint's original one")
		}
	})
}
