package conformance

import (
	"context"
	"net/http"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardApps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "DASH", "the installed apps list names each app, its scopes in plain words and when it was installed", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		empty, err := o.Client.ListInstalledAppsWithResponse(ctx)
		if err != nil || empty.JSON200 == nil || len(empty.JSON200.Data) != 0 {
			t.Fatalf("empty list: %v %s", err, empty.Body)
		}
		first := appInstall(t, o.Merchant, "payments:read", "analytics:read")
		second := appInstall(t, o.Merchant, "merchant:read")
		appInstall(t, newMerchant(t, false)) // another merchant's: not listed
		r, err := o.Client.ListInstalledAppsWithResponse(ctx)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("list: %v %s", err, r.Body)
		}
		got := r.JSON200.Data
		if len(got) != 2 || got[0].Id == got[1].Id || (got[0].Id != first.Installation && got[0].Id != second.Installation) ||
			(got[1].Id != first.Installation && got[1].Id != second.Installation) {
			t.Fatalf("list %s, want the merchant's two installations", r.Body)
		}
		i := got[0]
		if i.Id != first.Installation {
			i = got[1]
		}
		if i.App.Id != first.App || i.App.Name != "Conformance app" || i.InstalledAt != first.Created || len(i.Scopes) != 2 ||
			i.Scopes[0].Scope != "payments:read" || i.Scopes[0].Description != "See your payments, including the buyer's name and e-mail address" ||
			i.Scopes[1].Scope != "analytics:read" || i.Scopes[1].Description == "" {
			t.Fatalf("installation %+v", i)
		}
		if i.LastUsed != nil {
			t.Fatalf("never used, but last_used %d", *i.LastUsed)
		}
	})

	harness.Rule(t, "DASH", "an App API request with either token shows as the installation's last use", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		i := appInstall(t, o.Merchant)
		if r := appRaw(t, http.MethodGet, "/v1/merchant", i.TestToken); r.Status != 200 {
			t.Fatalf("App API: %d %s", r.Status, r.Body)
		}
		r, err := o.Client.ListInstalledAppsWithResponse(ctx)
		if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 1 {
			t.Fatalf("list: %v %s", err, r.Body)
		}
		if lu := r.JSON200.Data[0].LastUsed; lu == nil || *lu < i.Created {
			t.Fatalf("last_used after a request: %s", r.Body)
		}
	})

	harness.Rule(t, "D17", "uninstalling in the dashboard revokes both tokens at once: the next App API request is 401 invalid_token", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		i := appInstall(t, o.Merchant)
		for _, tok := range []string{i.LiveToken, i.TestToken} {
			if r := appRaw(t, http.MethodGet, "/v1/merchant", tok); r.Status != 200 {
				t.Fatalf("before: %d %s", r.Status, r.Body)
			}
		}
		u, err := o.Client.UninstallAppWithResponse(ctx, i.Installation)
		if err != nil || u.JSON200 == nil || u.JSON200.Id != i.Installation {
			t.Fatalf("uninstall: %v %s", err, u.Body)
		}
		for _, tok := range []string{i.LiveToken, i.TestToken} {
			wantAppError(t, appRaw(t, http.MethodGet, "/v1/merchant", tok), 401, "invalid_token", "revoked")
		}
		list, err := o.Client.ListInstalledAppsWithResponse(ctx)
		if err != nil || list.JSON200 == nil || len(list.JSON200.Data) != 0 {
			t.Fatalf("list after uninstall: %v %s", err, list.Body)
		}
		again, err := o.Client.UninstallAppWithResponse(ctx, i.Installation)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, again, again.HTTPResponse, again.Body, 404, "not_found", "installation_not_found", "id")
	})

	harness.Rule(t, "DASH", "another merchant's installation is 404 and stays installed; uninstall needs the CSRF token", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		other := newMerchant(t, false)
		i := appInstall(t, other)
		r, err := o.Client.UninstallAppWithResponse(ctx, i.Installation)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "installation_not_found", "id")
		r, err = o.Client.UninstallAppWithResponse(ctx, "not-a-uuid")
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "installation_not_found", "id")
		if a := appRaw(t, http.MethodGet, "/v1/merchant", i.TestToken); a.Status != 200 {
			t.Fatalf("the other merchant's app lost access: %d %s", a.Status, a.Body)
		}
		mine := appInstall(t, o.Merchant)
		r, err = o.Client.UninstallAppWithResponse(ctx, mine.Installation, csrfHeader("wrong"))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 403, "permission_error", "csrf_token_invalid", "")
		if a := appRaw(t, http.MethodGet, "/v1/merchant", mine.LiveToken); a.Status != 200 {
			t.Fatalf("uninstalled without CSRF token: %d %s", a.Status, a.Body)
		}
	})
}
