package postgres_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/adapters/signing"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/webhooks"
)

// The fan-out makes one delivery per (installation, app endpoint) for an app event the
// installation may read, none for an installation without the scope or an event outside the
// app catalog; the claim hands it out with its installation and the app endpoint's secret;
// revoking the installation stops its pending deliveries at once, and a new installation of
// the app receives the next events.
func TestAppFanOutDeliversPerInstallationAndStopsAtUninstall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	box, err := signing.NewBox(bytes.Repeat([]byte{7}, signing.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	hooks, appStore := postgres.NewWebhookStore(db, box), postgres.NewAppStore(db)
	svc, err := apps.NewService(appStore, core.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	scope := pgtest.Merchant(t, db)
	install := func(scopes ...string) (*apps.App, *apps.Installation) {
		a, _, err := svc.RegisterApp(ctx, apps.AppInput{Name: "A", RedirectURIs: []string{"https://a.example/cb"},
			Scopes: []string{"payments:read", "invoices:read"}})
		if err != nil {
			t.Fatal(err)
		}
		i, _, err := svc.Install(ctx, a.ID(), scope.MerchantID, scopes)
		if err != nil {
			t.Fatal(err)
		}
		return a, i
	}
	reader, readerInst := install("payments:read")
	blind, _ := install("invoices:read")
	appHooks, err := webhooks.NewAppService(hooks, core.SystemClock{}, webhooks.Destinations{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := appHooks.CreateEndpoint(ctx, reader.ID(), webhooks.AppEndpointParams{URL: "https://a.example/hooks", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := appHooks.CreateEndpoint(ctx, blind.ID(), webhooks.AppEndpointParams{URL: "https://b.example/hooks", Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	event := func(typ core.EventType) core.EventRecord {
		return core.EventRecord{ID: core.NewID("evt_"), Type: typ, Scope: scope, Created: now, ObjectKind: core.ObjectCheckoutSession,
			ObjectID: "cs_1", Object: []byte(`{"id":"cs_1","object":"checkout.session"}`)}
	}
	match := func(e *webhooks.Endpoint, typ string) bool { return e.Subscribes(typ) }
	publishAndFan := func(evs ...core.EventRecord) {
		t.Helper()
		if err := postgres.InsertEventRecords(ctx, db, evs...); err != nil {
			t.Fatal(err)
		}
		if _, err := hooks.FanOut(ctx, 100, now, match); err != nil {
			t.Fatal(err)
		}
	}
	expired := event(core.EventCheckoutSessionExpired)
	publishAndFan(expired, event(core.EventCheckoutSessionAsyncPaymentSucceeded)) // the second: merchant catalog only
	jobs, err := hooks.ClaimDue(ctx, now, time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Installation != readerInst.ID() || jobs[0].Event.ID != expired.ID || jobs[0].Endpoint.ID() != ep.ID ||
		jobs[0].Endpoint.Secret() != ep.Secret {
		t.Fatalf("jobs %+v, want one for the installation with payments:read", jobs)
	}
	// The merchant does not see the app endpoint's copy among its endpoints.
	if list, err := hooks.ListEndpoints(ctx, scope); err != nil || len(list) != 0 {
		t.Fatalf("merchant endpoints %v %v", list, err)
	}

	// A pending (failed, due later) delivery stops with the uninstall.
	if err := hooks.RecordAttempt(ctx, jobs[0], webhooks.Attempt{Number: 1, StartedAt: now, Outcome: webhooks.Outcome{StatusCode: 500}}, now,
		func(*webhooks.Endpoint) webhooks.Next {
			at := now.Add(time.Second)
			return webhooks.Next{Status: webhooks.DeliveryPending, NextAttemptAt: &at}
		}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Uninstall(ctx, readerInst.ID()); err != nil {
		t.Fatal(err)
	}
	if jobs, err := hooks.ClaimDue(ctx, now.Add(time.Hour), time.Minute, 100); err != nil || len(jobs) != 0 {
		t.Fatalf("after uninstalling: %d jobs %v", len(jobs), err)
	}
	if _, ok, err := hooks.NextDue(ctx); err != nil || ok {
		t.Fatalf("a delivery is still due after uninstalling: %v %v", ok, err)
	}
	publishAndFan(event(core.EventCheckoutSessionExpired))
	if jobs, err := hooks.ClaimDue(ctx, now.Add(time.Hour), time.Minute, 100); err != nil || len(jobs) != 0 {
		t.Fatalf("an event after uninstalling: %d jobs %v", len(jobs), err)
	}

	// Installed again: the next event goes out under the new installation.
	again, _, err := svc.Install(ctx, reader.ID(), scope.MerchantID, []string{"payments:read"})
	if err != nil {
		t.Fatal(err)
	}
	next := event(core.EventCheckoutSessionExpired)
	publishAndFan(next)
	jobs, err = hooks.ClaimDue(ctx, now.Add(time.Hour), time.Minute, 100)
	if err != nil || len(jobs) != 1 || jobs[0].Installation != again.ID() || jobs[0].Event.ID != next.ID {
		t.Fatalf("after installing again: %+v %v", jobs, err)
	}
}
