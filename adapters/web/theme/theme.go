// Package theme is Kassa's one set of design tokens (colour, type, spacing, badges): kassa.css,
// served by every origin that has pages (hosted checkout, dashboard, API references) and used by
// each page's own stylesheet. Values that cannot come from a stylesheet (the attributes of the
// vendored API reference renderer) are read from the same file with Token.
package theme

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
)

// FileName is the stylesheet's name; each origin serves it under its asset path.
const FileName = "kassa.css"

//go:embed kassa.css
var css []byte

// etag is the file's content hash: the file changes only with the binary.
var etag = func() string {
	sum := sha256.Sum256(css)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}()

// CSS returns the stylesheet.
func CSS() []byte { return bytes.Clone(css) }

// tokenRE matches one custom property declaration of the :root block.
var tokenRE = regexp.MustCompile(`(--k-[a-z0-9-]+):\s*([^;]+);`)

// tokens are the custom properties of kassa.css by name ("--k-ink" → "#1a1f36").
var tokens = func() map[string]string {
	out := map[string]string{}
	for _, m := range tokenRE.FindAllSubmatch(css, -1) {
		out[string(m[1])] = string(bytes.TrimSpace(m[2]))
	}
	return out
}()

// Token returns the value of the custom property name ("--k-accent"); it panics on a name the
// file does not declare, so a renamed token fails at start-up and in the tests, not silently.
func Token(name string) string {
	v, ok := tokens[name]
	if !ok {
		panic("theme: no token " + name + " in " + FileName)
	}
	return v
}

// Serve writes the stylesheet: revalidated on every use (no-cache + ETag), because the binary
// can change under the same URL and every page of the origin depends on it.
func Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", etag)
	if match := r.Header.Get("If-None-Match"); match != "" && bytes.Contains([]byte(match), []byte(etag)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(css)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(css)
	}
}
