package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

func box(t *testing.T, keys ...[]byte) *signing.Box {
	t.Helper()
	var b *signing.Box
	var err error
	if len(keys) == 0 {
		b, err = signing.NewBox(nil)
	} else {
		b, err = signing.NewBox(keys[0], keys[1:]...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func storedSecret(t *testing.T, e *whEnv, id string) []byte {
	t.Helper()
	var sealed []byte
	if err := e.db.Get(&sealed, `SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return sealed
}

// Rows written in clear (before a key was configured) are sealed by ResealSecrets; with the
// ring "new, old" rows under the old key move to the new one, after which the new key alone
// opens everything.
func TestWebhookResealSecrets(t *testing.T) {
	ctx := context.Background()
	e := newWhEnv(t) // sealed under key 42
	oldKey := bytes.Repeat([]byte{42}, signing.KeySize)
	newKey := bytes.Repeat([]byte{43}, signing.KeySize)

	underOld, oldSecret := e.endpoint(t, "https://shop.example/old")
	rotated, _ := e.endpoint(t, "https://shop.example/rotated")
	_, rotatedSecret, err := e.svc.RotateSecret(ctx, e.scope, rotated.ID())
	if err != nil {
		t.Fatal(err)
	}
	clearStore := postgres.NewWebhookStore(e.db, box(t))
	clearEp, clearSecret, err := whService(t, clearStore, e.clock, false).CreateEndpoint(ctx, e.scope,
		webhooks.EndpointParams{URL: "https://shop.example/clear", EnabledEvents: []string{webhooks.AllEvents}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(storedSecret(t, e, clearEp.ID()), []byte(clearSecret)) {
		t.Fatal("the keyless store did not write in clear (the case needs a clear row)")
	}

	ring := postgres.NewWebhookStore(e.db, box(t, newKey, oldKey))
	rep, err := ring.ResealSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resealed != 3 || rep.Unreadable != 0 {
		t.Fatalf("reseal: %+v, want 3 resealed", rep)
	}
	if bytes.Contains(storedSecret(t, e, clearEp.ID()), []byte(clearSecret)) {
		t.Fatal("the clear row is still clear")
	}
	// Idempotent: nothing left to do.
	if rep, err := ring.ResealSecrets(ctx); err != nil || rep.Resealed != 0 {
		t.Fatalf("second reseal: %+v, %v", rep, err)
	}
	// The new key alone opens every row, the previous secret of the rotated one included.
	newOnly := whService(t, postgres.NewWebhookStore(e.db, box(t, newKey)), e.clock, false)
	for id, want := range map[string]string{underOld.ID(): oldSecret, clearEp.ID(): clearSecret, rotated.ID(): rotatedSecret} {
		got, err := newOnly.GetEndpoint(ctx, e.scope, id)
		if err != nil || got.SecretUnavailable() || got.Secret() != want {
			t.Fatalf("%s under the new key: %v, unavailable %v", id, err, got != nil && got.SecretUnavailable())
		}
	}
	got, _ := newOnly.GetEndpoint(ctx, e.scope, rotated.ID())
	if len(got.ActiveSecrets(e.clock.Now())) != 2 {
		t.Fatal("the rotated endpoint lost its previous secret in the reseal")
	}
	// The old key alone no longer opens them.
	oldOnly := whService(t, postgres.NewWebhookStore(e.db, box(t, oldKey)), e.clock, false)
	if got, err := oldOnly.GetEndpoint(ctx, e.scope, underOld.ID()); err != nil || !got.SecretUnavailable() {
		t.Fatalf("old key after the reseal: %v", err)
	}
}

// A missing or wrong key makes no endpoint unreadable: reads and lists work and mark the
// endpoint; an update keeps the stored secret as it is (the right key opens it again); a test
// event is refused with webhook_secret_unavailable; a queued delivery fails without a request;
// rotating gives a new secret.
func TestWebhookSecretUnavailable(t *testing.T) {
	ctx := context.Background()
	e := newWhEnv(t)
	rc := newReceiver(t, nil)
	ep, secret := e.endpoint(t, rc.URL)
	before := storedSecret(t, e, ep.ID())

	wrongStore := postgres.NewWebhookStore(e.db, box(t, bytes.Repeat([]byte{7}, signing.KeySize)))
	wrong := whService(t, wrongStore, e.clock, true)
	for name, b := range map[string]*signing.Box{"wrong key": box(t, bytes.Repeat([]byte{7}, signing.KeySize)), "no key": box(t)} {
		svc := whService(t, postgres.NewWebhookStore(e.db, b), e.clock, false)
		got, err := svc.GetEndpoint(ctx, e.scope, ep.ID())
		if err != nil || !got.SecretUnavailable() || got.Secret() != "" {
			t.Fatalf("%s: get: %v", name, err)
		}
		list, err := svc.ListEndpoints(ctx, e.scope)
		if err != nil || len(list) != 1 || !list[0].SecretUnavailable() {
			t.Fatalf("%s: list: %v", name, err)
		}
		if _, err := svc.SendTestEvent(ctx, e.scope, ep.ID()); !errors.Is(err, webhooks.ErrSecretUnavailable) {
			t.Fatalf("%s: test event: %v", name, err)
		}
	}
	desc := "renamed"
	if _, err := wrong.ChangeEndpoint(ctx, e.scope, ep.ID(), webhooks.EndpointChanges{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(storedSecret(t, e, ep.ID()), before) {
		t.Fatal("an update under the wrong key rewrote the stored secret")
	}
	if got, err := e.svc.GetEndpoint(ctx, e.scope, ep.ID()); err != nil || got.Secret() != secret || got.Description() != "renamed" {
		t.Fatalf("the right key after an update under the wrong one: %v", err)
	}

	// A delivery claimed by a worker under the wrong key is not sent.
	evt := e.event(t, "checkout.session.expired")
	w := mustWorker(t, wrongStore, e.sender, e.clock, webhooks.WorkerOptions{Rand: func() float64 { return 0.5 }, Lease: 10 * time.Second})
	if n := runOnce(t, w); n != 1 {
		t.Fatalf("attempts made: %d", n)
	}
	if len(rc.got()) != 0 {
		t.Fatal("a delivery went out without its secret")
	}
	if a := e.attempts(t, evt); len(a) != 1 || a[0].Status != nil || a[0].Err == nil || !strings.Contains(*a[0].Err, "KASSA_WEBHOOK_SECRET_KEY") {
		t.Fatalf("attempt %+v", a)
	}
	if d := e.delivery(t, evt); d.Status != "pending" || d.Next == nil {
		t.Fatalf("delivery %+v: want pending, retried later", d)
	}

	// Rotating under the wrong key recovers the endpoint.
	_, fresh, err := wrong.RotateSecret(ctx, e.scope, ep.ID())
	if err != nil {
		t.Fatal(err)
	}
	got, err := wrong.GetEndpoint(ctx, e.scope, ep.ID())
	if err != nil || got.SecretUnavailable() || got.Secret() != fresh {
		t.Fatalf("after rotation: %v", err)
	}
}
