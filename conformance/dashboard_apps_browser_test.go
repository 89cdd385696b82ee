package conformance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
)

func TestDashboardAppsPage(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "PAGES", "the apps page lists an installed app with its scopes in plain words and uninstalls it after a confirmation", func(t *testing.T) {
		t.Parallel()
		o := dpNewOwner(t)
		i := appInstall(t, o.Merchant, "payments:read", "refunds:read")
		ctx := harness.NewBrowser(t)
		dpSignIn(t, ctx, o)
		dpGo(t, ctx, "/live/apps")
		dpWait(t, ctx, "the app in the list", dpHas("#apps tbody", "Conformance app"))
		got := dpText(t, ctx, "#apps tbody")
		for _, want := range []string{"See your payments, including the buyer's name and e-mail address", "See your refunds", "payments:read"} {
			if !strings.Contains(got, want) {
				t.Fatalf("the row says %q, want %q in it", got, want)
			}
		}
		harness.Page(t, ctx, "dashboard-apps")

		dpDo(t, ctx, "uninstall", dpClick("[data-uninstall]"))
		dpWait(t, ctx, "the confirm dialog", `document.querySelector("dialog[open] [data-confirm]")`)
		harness.Page(t, ctx, "dashboard-app-uninstall-confirm")
		dpDo(t, ctx, "confirm", dpClick("dialog[open] [data-confirm]"))
		dpWait(t, ctx, "the empty list", dpHas("#main .empty", "No apps installed"))
		wantAppError(t, appRaw(t, http.MethodGet, "/v1/merchant", i.LiveToken), 401, "invalid_token", "revoked")
		dpGo(t, ctx, "/test/apps")
		dpWait(t, ctx, "the empty list in test mode", dpHas("#main .empty", "No apps installed"))
	})
}
