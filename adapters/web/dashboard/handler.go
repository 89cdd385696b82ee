package dashboardweb

import (
	"net/http"
	"regexp"
)

// sections are the pages of the signed-in app, as the first path segment after the environment
// (/test/payments, /live/catalog/prod_…). assets/app.js routes the same names; a section marked
// detail also has a page per object (/test/payments/py_…).
var sections = map[string]struct{ detail, testOnly bool }{
	"overview":          {},
	"payments":          {detail: true},
	"refunds":           {},
	"disputes":          {detail: true},
	"balance":           {},
	"payouts":           {detail: true},
	"checkout_sessions": {},
	"api_keys":          {},
	"webhooks":          {detail: true},
	"apps":              {},
	"catalog":           {detail: true},
	"customers":         {detail: true},
	"subscriptions":     {detail: true},
	"invoices":          {detail: true},
	"mailbox":           {detail: true, testOnly: true},
	"settings":          {},
}

// objectID is the shape of every Kassa id (prefix + base62), so a page URL that cannot name an
// object is a 404 here instead of a page that shows one.
var objectID = regexp.MustCompile(`^[a-z]{1,8}_[A-Za-z0-9]{1,64}$`)

// New returns the handler of the dashboard pages. cmd/kassa mounts it for every path of the
// dashboard origin outside /api/. It serves:
//
//	GET /                          → 302 /test/overview
//	GET /login                     → the sign-in page
//	GET /{test|live}/{section}     → the app shell (and /{env}/{section}/{id} for detail pages)
//	GET /assets/…                  → the stylesheet and the scripts
//
// Anything else is an HTML 404 page (405 for methods other than GET and HEAD). Whether the visitor is signed in is the API's business:
// the shell is the same for everybody and its script sends a visitor without a session to
// /login, so no page here ever holds merchant data.
func New() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/test/overview", http.StatusFound)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, http.StatusOK, loginPage)
	})
	mux.HandleFunc("GET /assets/{name...}", serveAsset)
	for _, env := range []string{"test", "live"} {
		mux.HandleFunc("GET /"+env+"/{$}", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/"+env+"/overview", http.StatusFound)
		})
		mux.HandleFunc("GET /"+env+"/{section}", appShell(env))
		mux.HandleFunc("GET /"+env+"/{section}/{id}", appShell(env))
	}
	mux.HandleFunc("/", notFound)
	return secureHeaders(mux)
}

// appShell serves the signed-in app of env for a known page and a 404 for anything else.
func appShell(env string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, id := r.PathValue("section"), r.PathValue("id")
		s, ok := sections[name]
		if !ok || s.testOnly && env != "test" || id != "" && (!s.detail || !objectID.MatchString(id)) {
			notFound(w, r)
			return
		}
		serve(w, r, http.StatusOK, appPage)
	}
}

// notFound answers any other path with the 404 page; every page here is read-only, so any
// method but GET and HEAD is a 405 wherever it is sent.
func notFound(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	serve(w, r, http.StatusNotFound, notFoundPage)
}
