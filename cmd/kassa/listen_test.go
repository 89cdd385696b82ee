package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sign computes a D10 signature independently of the server's signing code.
func sign(secret string, t time.Time, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.%s", t.Unix(), body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestReceiverVerifiesSignatures(t *testing.T) {
	now := time.Unix(1_795_000_000, 0)
	const body = `{"id":"evt_1","object":"event","type":"checkout.session.completed","environment":"test","api_version":"2026-11-01","created":1795000000,"data":{"object":{}}}`
	var out bytes.Buffer
	h := &receiver{secrets: []string{"whsec_new", "whsec_old"}, tolerance: 5 * time.Minute, out: &out, now: func() time.Time { return now }}
	for _, c := range []struct {
		name, header string
		want         int
		line         string
	}{
		{"current secret", fmt.Sprintf("t=%d,v1=%s", now.Unix(), sign("whsec_new", now, body)), 200, "signature verified"},
		{"previous secret during rotation", fmt.Sprintf("t=%d,v1=%s", now.Unix(), sign("whsec_old", now, body)), 200, "signature verified"},
		{"wrong secret", fmt.Sprintf("t=%d,v1=%s", now.Unix(), sign("whsec_other", now, body)), 400, "NOT verified"},
		{"stale timestamp", fmt.Sprintf("t=%d,v1=%s", now.Add(-time.Hour).Unix(), sign("whsec_new", now.Add(-time.Hour), body)), 400, "timestamp_outside_tolerance"},
		{"no header", "", 400, "NOT verified"},
	} {
		out.Reset()
		req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body))
		if c.header != "" {
			req.Header.Set("Service-Signature", c.header)
		}
		req.Header.Set("Service-Event-Type", "checkout.session.completed")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want || !strings.Contains(out.String(), c.line) {
			t.Errorf("%s: %d %q", c.name, rec.Code, out.String())
		}
	}
	if got := splitSecrets(" whsec_a, ,whsec_b "); len(got) != 2 || got[0] != "whsec_a" || got[1] != "whsec_b" {
		t.Fatalf("splitSecrets: %q", got)
	}
}
