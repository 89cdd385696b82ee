package dashboardapi

import (
	"net/http"
	"strings"
	"testing"
)

// The session cookie is HttpOnly, SameSite=Strict, Path=/, and Secure exactly when the
// dashboard is served over https; clearing it expires it at once.
func TestSessionCookieAttributes(t *testing.T) {
	for _, secure := range []bool{false, true} {
		a := &dashboardAPI{d: DashboardDeps{SecureCookie: secure}}
		h := http.Header{"Set-Cookie": {a.sessionCookie("tok123")}}
		c := (&http.Response{Header: h}).Cookies()[0]
		if c.Name != SessionCookie || c.Value != "tok123" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode ||
			c.Path != "/" || c.Secure != secure || c.MaxAge != 7*24*3600 {
			t.Fatalf("secure=%v: %q", secure, h.Get("Set-Cookie"))
		}
		cleared := a.sessionCookie("")
		if !strings.Contains(cleared, "Max-Age=0") || !strings.HasPrefix(cleared, SessionCookie+"=;") {
			t.Fatalf("cleared cookie %q", cleared)
		}
	}
}
