package dashboardweb

import "net/http"

// contentSecurityPolicy allows only this origin's own scripts, styles and API calls. Images may
// come from https: and data: URLs because product images are merchant-supplied URLs. Nothing
// may frame the dashboard (clickjacking), and forms may only post here.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' https: data:; connect-src 'self'; form-action 'self'; base-uri 'none'; " +
	"frame-ancestors 'none'"

// secureHeaders sets the headers every dashboard page and asset carries. X-Frame-Options repeats
// frame-ancestors for browsers that predate CSP level 2.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}
