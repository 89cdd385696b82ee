package checkoutweb

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Security headers of the checkout origin (issue 3 §1). Every response gets the baseline;
// pages add their CSP: no inline script or style anywhere, forms may post only to this origin
// and to the origins the session sends the buyer to (Chromium checks form-action on the
// redirect that follows a post), and only the /embed/ pages may be framed.

// pageKind says how a page may be framed and cached.
type pageKind int

const (
	pageTop   pageKind = iota // /c/…: never framed
	pageEmbed                 // /embed/…: framed by any site
)

func baseHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// pageHeaders sets the headers of an HTML page. secret pages (all that carry or answer a
// client secret) are never cached; formTargets are the absolute URLs a form of the page may
// end up at (success_url, cancel_url).
func pageHeaders(h http.Header, kind pageKind, formTargets ...string) {
	baseHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	ancestors := "'none'"
	if kind == pageEmbed {
		ancestors = "*"
		h.Del("X-Frame-Options")
	} else {
		h.Set("X-Frame-Options", "DENY")
	}
	h.Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' https: data:",
		"form-action " + strings.Join(formAction(formTargets), " "),
		"connect-src 'self'",
		"base-uri 'none'",
		"frame-ancestors " + ancestors,
	}, "; "))
}

// formAction lists 'self' and the origins (scheme://host[:port]) of the given URLs. A URL
// that is not absolute http(s) is left out; CSP source expressions cannot carry anything else.
func formAction(targets []string) []string {
	out := []string{"'self'"}
	for _, t := range targets {
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			strings.ContainsAny(u.Host, " ;,'\"") {
			continue
		}
		o := u.Scheme + "://" + u.Host
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// seeOther answers 303 to target. Redirects within a session carry the client secret in
// their Location, so no redirect is cached either.
func seeOther(w http.ResponseWriter, r *http.Request, target string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target, http.StatusSeeOther) //nolint:gosec // G710: targets are this server's session paths or URLs the merchant API validated (success_url, the processor's challenge)
}
