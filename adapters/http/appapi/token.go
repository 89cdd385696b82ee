package appapi

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"

	"github.com/kassa-pay/kassa/modules/apps"
)

// tokenResponse is the token endpoint's answer (RFC 6749 5.1) with the installation's test
// token beside the live one.
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TestAccessToken string `json:"test_access_token"`
	TokenType       string `json:"token_type"`
	Scope           string `json:"scope"`
	Installation    string `json:"installation"`
}

type tokenError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// token is POST {app_base_url}/oauth/token: the authorization code with PKCE exchanged for the
// installation's tokens. The client authenticates with HTTP Basic or with client_id and
// client_secret in the form; errors are RFC 6749's.
func (a *API) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeTokenError(w, http.StatusMethodNotAllowed, "invalid_request", "The token endpoint answers POST only.")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		writeTokenError(w, http.StatusBadRequest, "invalid_request", "Send the parameters form-encoded (application/x-www-form-urlencoded).")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeTokenError(w, http.StatusBadRequest, "invalid_request", "The form could not be read.")
		return
	}
	f := r.PostForm
	in := apps.TokenRequest{GrantType: f.Get("grant_type"), Code: f.Get("code"), RedirectURI: f.Get("redirect_uri"),
		ClientID: f.Get("client_id"), ClientSecret: f.Get("client_secret"), CodeVerifier: f.Get("code_verifier")}
	basic := false
	if id, secret, ok := r.BasicAuth(); ok {
		// RFC 6749 2.3.1: both are form-encoded before Basic encoding.
		uid, err1 := url.QueryUnescape(id)
		usecret, err2 := url.QueryUnescape(secret)
		if err1 != nil || err2 != nil || (in.ClientID != "" && in.ClientID != uid) {
			writeTokenError(w, http.StatusBadRequest, "invalid_request", "The client credentials are malformed.")
			return
		}
		in.ClientID, in.ClientSecret, basic = uid, usecret, true
	}
	inst, tokens, err := a.d.Apps.Exchange(r.Context(), in)
	var oe *apps.OAuthError
	switch {
	case errors.As(err, &oe):
		if oe.Status == http.StatusUnauthorized && basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="kassa"`)
		}
		writeTokenError(w, oe.Status, oe.Code, oe.Description)
		return
	case err != nil:
		status, _, msg := appError(r, err)
		writeTokenError(w, status, "server_error", msg)
		return
	}
	scope := ""
	for i, s := range inst.Scopes() {
		if i > 0 {
			scope += " "
		}
		scope += s
	}
	writeTokenJSON(w, http.StatusOK, tokenResponse{AccessToken: tokens.Live, TestAccessToken: tokens.Test, TokenType: "bearer",
		Scope: scope, Installation: inst.ID()})
}

func writeTokenError(w http.ResponseWriter, status int, code, description string) {
	writeTokenJSON(w, status, tokenError{Error: code, Description: description})
}

func writeTokenJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
