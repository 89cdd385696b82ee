package checkoutweb

import (
	"bytes"
	"embed"
	"net/http"
	"path"
	"time"

	"github.com/kassa-pay/kassa/adapters/web/theme"
)

//go:embed static
var staticFS embed.FS

// assetTypes are the files /assets/ serves; anything else is a 404.
var assetTypes = map[string]string{
	"checkout.css": "text/css; charset=utf-8",
	"checkout.js":  "text/javascript; charset=utf-8",
}

// startTime is the Last-Modified of the embedded files: they change only with the binary.
var startTime = time.Now()

// serveAsset serves the design tokens (kassa.css), the pages' stylesheet and script: public, no secret, cacheable briefly
// (a new release must reach buyers within minutes).
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == theme.FileName {
		theme.Serve(w, r)
		return
	}
	ct, ok := assetTypes[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	serveStatic(w, r, name, ct)
}

// serveKassaJS serves /js/kassa.js to merchants' pages on any origin.
func serveKassaJS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
	serveStatic(w, r, "kassa.js", "text/javascript; charset=utf-8")
}

func serveStatic(w http.ResponseWriter, r *http.Request, name, contentType string) {
	b, err := staticFS.ReadFile(path.Join("static", name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "public, max-age=300")
	http.ServeContent(w, r, name, startTime, bytes.NewReader(b))
}
