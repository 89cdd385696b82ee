package kit

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kassa-pay/kassa/core"
)

// The access log line of an App API request names the installation whose token was used,
// beside the merchant and the environment; other requests name none.
func TestAccessLogNamesTheInstallation(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	h := Outer(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app/v1/merchant" {
			ctx := WithCaller(r.Context(), core.Caller{Scope: core.Scope{MerchantID: "mer_x", Env: core.EnvLive}})
			LogInstallation(ctx, "3f0c2a4e-8b1d-4c6f-9a2e-5d7b8c9e0f1a")
		}
		w.WriteHeader(http.StatusOK)
	}))
	for _, path := range []string{"/app/v1/merchant", "/v1/products"} {
		logs.Reset()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		var line map[string]any
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v: %s", path, err, logs.String())
		}
		inst, named := line["installation"]
		if path == "/v1/products" {
			if named {
				t.Fatalf("a merchant API request names an installation: %s", logs.String())
			}
			continue
		}
		if inst != "3f0c2a4e-8b1d-4c6f-9a2e-5d7b8c9e0f1a" || line["merchant"] != "mer_x" || line["environment"] != "live" {
			t.Fatalf("log line: %s", logs.String())
		}
	}
}
