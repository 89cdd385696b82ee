// Package consent is the OAuth install flow's page on the dashboard origin: GET
// /oauth/authorize checks the app's request and, for a signed-in merchant user, asks for
// consent, naming the app and each scope in plain words; POST /oauth/authorize records the
// answer and sends the browser back to the app's redirect URI with `code` and `state` (or
// `error=access_denied`). A visitor who is not signed in goes to the dashboard's sign-in page
// first and comes back here.
package consent

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/kassa-pay/kassa/adapters/http/dashboardapi"
	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/identity"
)

// Deps is what the page needs.
type Deps struct {
	Apps     *apps.Service
	Sessions *identity.Dashboard
	Log      *slog.Logger
}

type handler struct{ d Deps }

// New returns the handler of /oauth/authorize.
func New(d Deps) (http.Handler, error) {
	if d.Apps == nil || d.Sessions == nil || d.Log == nil {
		return nil, errors.New("consent: the apps service, the dashboard sessions and the log are required")
	}
	return &handler{d: d}, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	switch r.Method {
	case http.MethodGet:
		h.ask(w, r)
	case http.MethodPost:
		h.answer(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		h.page(w, http.StatusMethodNotAllowed, "", errorPage, map[string]any{"Message": "This page answers GET and POST only."})
	}
}

func requestOf(v url.Values) apps.AuthorizationRequest {
	return apps.AuthorizationRequest{
		ResponseType: v.Get("response_type"), ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"),
		Scope: v.Get("scope"), State: v.Get("state"), CodeChallenge: v.Get("code_challenge"),
		CodeChallengeMethod: v.Get("code_challenge_method"),
	}
}

// check validates the request; it answers false after writing the answer (an error page, or
// a redirect with the error when the redirect URI is the app's).
func (h *handler) check(w http.ResponseWriter, r *http.Request, req apps.AuthorizationRequest) (*apps.Consent, bool) {
	c, err := h.d.Apps.CheckAuthorization(r.Context(), req)
	var oe *apps.OAuthError
	switch {
	case errors.As(err, &oe) && oe.Redirect:
		redirect(w, r, req.RedirectURI, url.Values{"error": {oe.Code}, "error_description": {oe.Description}, "state": {req.State}})
		return nil, false
	case errors.As(err, &oe):
		h.page(w, http.StatusBadRequest, "", errorPage, map[string]any{"Message": "This app's request is not valid: " + oe.Description + " Nothing was shared; tell the app's developer."})
		return nil, false
	case err != nil:
		h.d.Log.ErrorContext(r.Context(), "consent", "request_id", kit.RequestID(r.Context()), "error", err.Error())
		h.page(w, http.StatusInternalServerError, "", errorPage, map[string]any{"Message": "Something went wrong on our side. Try again in a moment."})
		return nil, false
	}
	return c, true
}

func (h *handler) session(ctx context.Context, r *http.Request) (*identity.DashboardSession, error) {
	c, err := r.Cookie(dashboardapi.SessionCookie)
	if err != nil {
		return nil, identity.ErrSessionRequired
	}
	return h.d.Sessions.Session(ctx, c.Value)
}

func (h *handler) ask(w http.ResponseWriter, r *http.Request) {
	req := requestOf(r.URL.Query())
	c, ok := h.check(w, r, req)
	if !ok {
		return
	}
	s, err := h.session(r.Context(), r)
	if err != nil {
		// Sign in first, then come back to this very request.
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	type scope struct{ Name, Words string }
	scopes := make([]scope, len(c.Scopes))
	for i, sc := range c.Scopes {
		scopes[i] = scope{sc, apps.ScopeWords(sc)}
	}
	h.page(w, http.StatusOK, req.RedirectURI, consentPage, map[string]any{
		"App": c.App.Name(), "Merchant": s.MerchantName, "User": s.UserEmail, "Scopes": scopes,
		"Host": hostOf(req.RedirectURI), "Request": req, "CSRF": s.CSRFToken,
	})
}

func (h *handler) answer(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.page(w, http.StatusBadRequest, "", errorPage, map[string]any{"Message": "The form could not be read."})
		return
	}
	req := requestOf(r.PostForm)
	s, err := h.session(r.Context(), r)
	if err != nil || !s.CSRFValid(r.PostForm.Get("csrf_token")) {
		h.page(w, http.StatusForbidden, "", errorPage, map[string]any{"Message": "Your session has ended or the form is stale. Start again from the app."})
		return
	}
	c, ok := h.check(w, r, req)
	if !ok {
		return
	}
	if r.PostForm.Get("decision") != "approve" {
		redirect(w, r, req.RedirectURI, url.Values{"error": {"access_denied"}, "error_description": {"The merchant declined."}, "state": {req.State}})
		return
	}
	code, err := h.d.Apps.Approve(r.Context(), c, s.MerchantID)
	if err != nil {
		h.d.Log.ErrorContext(r.Context(), "consent approve", "request_id", kit.RequestID(r.Context()), "error", err.Error())
		h.page(w, http.StatusInternalServerError, "", errorPage, map[string]any{"Message": "Something went wrong on our side. Try again in a moment."})
		return
	}
	redirect(w, r, req.RedirectURI, url.Values{"code": {code}, "state": {req.State}})
}

// redirect sends the browser to the app's registered redirect URI with params added to its
// query (an empty state is left out).
func redirect(w http.ResponseWriter, r *http.Request, to string, params url.Values) {
	u, err := url.Parse(to)
	if err != nil {
		http.Error(w, "bad redirect URI", http.StatusBadRequest)
		return
	}
	q := u.Query()
	for k, vs := range params {
		if len(vs) == 1 && vs[0] == "" {
			continue
		}
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Host
}

// page renders a page with a CSP that lets its form submit here and be redirected to the
// app's redirect URI (formTo), and nothing else.
func (h *handler) page(w http.ResponseWriter, status int, formTo string, t *template.Template, data any) {
	formAction := "'self'"
	if p, err := url.Parse(formTo); err == nil && p.Scheme != "" && p.Host != "" {
		formAction += " " + p.Scheme + "://" + p.Host
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action "+formAction+"; base-uri 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		h.d.Log.Error("consent page", "error", err.Error())
		return
	}
	_, _ = w.Write([]byte(b.String()))
}

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow {{.App}} to access {{.Merchant}}? · Kassa</title>
<link rel="stylesheet" href="/assets/kassa.css">
<link rel="stylesheet" href="/assets/app.css">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml"></head>
<body class="login-body">
<main class="login-card" id="main">
<p class="k-brand brand-large">Kassa</p>
<h1>Allow {{.App}} to access {{.Merchant}}?</h1>
<p>You are signed in as {{.User}}. {{.App}} will be able to:</p>
<ul>{{range .Scopes}}<li>{{.Words}} <small>({{.Name}})</small></li>{{end}}</ul>
<p class="notice">It can only read, in both your test and live environments, and cannot move money. Uninstalling it ends its access at once.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<input type="hidden" name="response_type" value="{{.Request.ResponseType}}">
<input type="hidden" name="client_id" value="{{.Request.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.Request.RedirectURI}}">
<input type="hidden" name="scope" value="{{.Request.Scope}}">
<input type="hidden" name="state" value="{{.Request.State}}">
<input type="hidden" name="code_challenge" value="{{.Request.CodeChallenge}}">
<input type="hidden" name="code_challenge_method" value="{{.Request.CodeChallengeMethod}}">
<p>You will be sent back to {{.Host}}.</p>
<button type="submit" name="decision" value="approve" class="button button-primary">Allow</button>
<button type="submit" name="decision" value="deny" class="button">Deny</button>
</form>
</main>
</body></html>
`))

var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>App authorization · Kassa</title>
<link rel="stylesheet" href="/assets/kassa.css">
<link rel="stylesheet" href="/assets/app.css"></head>
<body class="login-body"><main class="login-card" id="main"><p class="k-brand brand-large">Kassa</p>
<h1>App authorization</h1><p class="notice notice-error">{{.Message}}</p></main></body></html>
`))
