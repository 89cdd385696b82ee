package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The dashboard's Apps page shows the events recently sent to each installed app.

func TestDashboardAppDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "DASH", "an installed app's recent deliveries are listed for the merchant; another merchant's installation is not found", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		a := appHookInstall(t, o.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, rc.URL, "*")
		sid := hookExpiredSession(t, o.Test)
		rc.waitFor(t, 1, hookWait, aboutObject(t, sid))
		var list []dash.AppDelivery
		deadline := time.Now().Add(hookWait)
		for {
			r, err := o.Client.ListAppDeliveriesWithResponse(ctx, &dash.ListAppDeliveriesParams{Installation: a.Installation})
			if err != nil || r.JSON200 == nil {
				t.Fatalf("list: %v %s", err, r.Body)
			}
			if list = r.JSON200.Data; len(list) == 1 && list[0].Status == "succeeded" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries %s, want one succeeded", r.Body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if d := list[0]; d.EventType != "checkout.session.expired" || d.Environment != "test" || d.Attempts != 1 || d.LastAttemptAt == nil {
			t.Fatalf("delivery %+v", d)
		}
		other := appHookInstall(t, newMerchant(t, true).ID)
		r, err := o.Client.ListAppDeliveriesWithResponse(ctx, &dash.ListAppDeliveriesParams{Installation: other.Installation})
		if err != nil || r.StatusCode() != http.StatusNotFound {
			t.Fatalf("another merchant's installation: %v %d %s", err, r.StatusCode(), r.Body)
		}
	})

	harness.Rule(t, "PAGES", "the apps page shows the events recently sent to an installed app", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		a := appHookInstall(t, o.ID, "payments:read")
		rc := newHookReceiver(t, nil)
		appHookEndpoint(t, a.ID, rc.URL, "*")
		sid := hookExpiredSession(t, o.Test)
		rc.waitFor(t, 1, hookWait, aboutObject(t, sid))
		bctx := harness.NewBrowser(t)
		dpSignIn(t, bctx, o)
		deadline := time.Now().Add(hookWait)
		for {
			dpGo(t, bctx, "/test/apps")
			dpWait(t, bctx, "the app in the list", dpHas("#apps tbody", "Conformance app"))
			dpWait(t, bctx, "the deliveries section", dpHas("section.app-deliveries", "Recent events sent to Conformance app"))
			if got := dpText(t, bctx, "section.app-deliveries"); containsAll(got, "checkout.session.expired", "succeeded", "Test") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the deliveries section says %q", dpText(t, bctx, "section.app-deliveries"))
			}
			time.Sleep(200 * time.Millisecond)
		}
		harness.Page(t, bctx, "dashboard-app-deliveries")
	})
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
