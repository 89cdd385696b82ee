package apidocs

import (
	_ "embed"
	"html/template"
	"net/http"
	"strings"

	"github.com/kassa-pay/kassa/adapters/web/theme"
)

// rendererVersion is the vendored RapiDoc's version; rendererSHA256 the SHA-256 of
// vendor/rapidoc-min.js, checked by a test so the file cannot change without the version noted.
const (
	rendererVersion = "9.3.8"
	rendererSHA256  = "affbd173a65e870e18f392cca963113bcdafb6e50e88cd2f6a834a65b22db94d"
	rendererFile    = "rapidoc-" + rendererVersion + ".min.js"
)

//go:embed vendor/rapidoc-min.js
var rendererJS []byte

// contentSecurityPolicy confines the page to its own origin: scripts and the spec fetch from
// 'self' only, no fonts but this origin's, images from 'self' and data: (the renderer's icons),
// inline styles because the renderer's web components set style attributes. Nothing may frame
// the page, and it posts no forms.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; " +
	"frame-ancestors 'none'"

// Page is one API's reference page.
type Page struct {
	// Path is where the page is served, e.g. "/docs"; the renderer script is served under it.
	Path string
	// SpecURL is the same-origin path of the API's served OpenAPI document.
	SpecURL string
	// Title is the page title and heading, e.g. "Kassa merchant API".
	Title string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{{.Stylesheet}}">
<script type="module" src="{{.Script}}"></script>
</head>
<body class="k-docs">
<header class="k-docs-header">
<p class="k-brand">Kassa</p>
<h1>{{.Title}} reference</h1>
</header>
<rapi-doc spec-url="{{.SpecURL}}" heading-text="{{.Title}}" load-fonts="false"
  regular-font="{{.T.Font}}" mono-font="{{.T.Mono}}"
  theme="light" bg-color="{{.T.Surface}}" text-color="{{.T.Ink}}" primary-color="{{.T.Accent}}"
  header-color="{{.T.Surface}}" nav-bg-color="{{.T.Bg}}" nav-text-color="{{.T.Ink}}"
  nav-hover-bg-color="{{.T.AccentSoft}}" nav-hover-text-color="{{.T.Ink}}" nav-accent-color="{{.T.Accent}}"
  render-style="read" show-header="false" allow-try="false" allow-authentication="false" allow-server-selection="false"
  allow-spec-url-load="false" allow-spec-file-load="false" allow-search="true" allow-advanced-search="false"
  schema-style="table" schema-expand-level="1" default-schema-tab="schema"></rapi-doc>
</body>
</html>
`))

// colours are the design tokens the renderer's attributes take (it draws in its own shadow
// DOM, so it is themed by attribute, from the same kassa.css the other pages use).
type colours struct{ Font, Mono, Surface, Bg, Ink, Accent, AccentSoft string }

func tokens() colours {
	return colours{
		Font: theme.Token("--k-font"), Mono: theme.Token("--k-font-mono"),
		Surface: theme.Token("--k-surface"), Bg: theme.Token("--k-bg"), Ink: theme.Token("--k-ink"),
		Accent: theme.Token("--k-accent"), AccentSoft: theme.Token("--k-accent-soft"),
	}
}

// Mount registers the page and its script on mux for GET (and so HEAD) requests.
func (p Page) Mount(mux *http.ServeMux) {
	mux.Handle("GET "+p.Path, p.page())
	mux.Handle("GET "+p.scriptPath(), script())
	mux.Handle("GET "+p.stylesheetPath(), secure(theme.Serve))
}

func (p Page) scriptPath() string { return strings.TrimSuffix(p.Path, "/") + "/" + rendererFile }

// stylesheetPath is where the page's origin serves the design tokens (kassa.css).
func (p Page) stylesheetPath() string { return strings.TrimSuffix(p.Path, "/") + "/" + theme.FileName }

func (p Page) page() http.Handler {
	var b strings.Builder
	err := pageTemplate.Execute(&b, struct {
		Title, SpecURL, Script, Stylesheet string
		T                                  colours
	}{p.Title, p.SpecURL, p.scriptPath(), p.stylesheetPath(), tokens()})
	if err != nil {
		panic("apidocs: page template: " + err.Error()) // the template and its fields are fixed
	}
	body := []byte(b.String())
	return secure(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	})
}

func script() http.Handler {
	return secure(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		_, _ = w.Write(rendererJS)
	})
}

// secure sets the headers every docs response carries.
func secure(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		next(w, r)
	})
}

// The reference pages, one per API, each on the listener that serves the API.
var (
	// Merchant is {base_url}/docs on the API listener.
	Merchant = Page{Path: "/docs", SpecURL: "/v1/openapi.json", Title: "Kassa merchant API"}
	// Operator is {base_url}/operator/docs on the API listener.
	Operator = Page{Path: "/operator/docs", SpecURL: "/operator/v1/openapi.json", Title: "Kassa operator API"}
	// App is {base_url}/app/docs on the API listener, beside the App API it describes.
	App = Page{Path: "/app/docs", SpecURL: "/app/v1/openapi.json", Title: "Kassa App API"}
	// Checkout is {checkout_base}/api/docs on the checkout listener.
	Checkout = Page{Path: "/api/docs", SpecURL: "/api/v1/openapi.json", Title: "Kassa checkout browser API"}
	// Dashboard is {dashboard}/api/docs on the dashboard listener.
	Dashboard = Page{Path: "/api/docs", SpecURL: "/api/v1/openapi.json", Title: "Kassa dashboard API"}
)
