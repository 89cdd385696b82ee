package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
)

// Merchant is a merchant of the test's own, with typed clients for its test and live keys.
type Merchant struct {
	ID               string
	TestKey, LiveKey string
	Test, Live       *api.ClientWithResponses
}

// operator returns a typed operator API client.
func operator(t *testing.T) *op.ClientWithResponses {
	t.Helper()
	return operatorAt(t, target)
}

// operatorAt is operator for another server the harness started (its token is its own).
func operatorAt(t *testing.T, srv *harness.Target) *op.ClientWithResponses {
	t.Helper()
	c, err := op.NewClientWithResponses(srv.BaseURL, op.WithHTTPClient(transport.Client()),
		op.WithRequestEditorFn(op.RequestEditorFn(bearer(srv.OperatorToken))))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newMerchant creates a merchant through the operator API (D1). Every case works under
// merchants of its own, so cases run in parallel and never see each other's data.
func newMerchant(t *testing.T, onboarded bool) *Merchant {
	t.Helper()
	resp, err := operator(t).CreateMerchantWithResponse(context.Background(), op.MerchantCreate{
		Name: "Conformance " + core.RandomBase62(6), Country: "DE", Email: "owner@example.com", Onboarded: &onboarded,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create merchant: %d %s", resp.StatusCode(), resp.Body)
	}
	m := resp.JSON201
	return &Merchant{ID: m.Id, TestKey: m.TestKey, LiveKey: m.LiveKey, Test: client(t, m.TestKey), Live: client(t, m.LiveKey)}
}

// client returns a typed merchant API client that authenticates with key.
func client(t *testing.T, key string) *api.ClientWithResponses {
	t.Helper()
	return clientAt(t, target.BaseURL, key)
}

// clientAt is client for another API base URL (a sibling server).
func clientAt(t *testing.T, base, key string) *api.ClientWithResponses {
	t.Helper()
	c, err := api.NewClientWithResponses(base, api.WithHTTPClient(transport.Client()), api.WithRequestEditorFn(bearer(key)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bearer(key string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		return nil
	}
}

// Raw is an HTTP exchange for cases that need bytes the typed client cannot send. Responses
// still pass through the validating transport.
type Raw struct {
	Status int
	Header http.Header
	Body   []byte
}

// raw sends method path with body (sent as is; "" for none) and headers; key "" sends no
// Authorization. A Content-Type of application/json is added to a non-empty body unless the
// headers set one.
func raw(t *testing.T, method, path, key, body string, headers map[string]string) Raw {
	t.Helper()
	return rawAt(t, target.BaseURL, method, path, key, body, headers)
}

// rawAt is raw against another API base URL (a sibling server).
func rawAt(t *testing.T, base, method, path, key, body string, headers map[string]string) Raw {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := transport.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Raw{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// rawJSON marshals v for raw.
func rawJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// envelope is the documented error envelope (interface 7, D3).
type envelope struct {
	Error struct {
		Type        string  `json:"type"`
		Code        string  `json:"code"`
		Message     string  `json:"message"`
		Param       *string `json:"param"`
		RequestID   string  `json:"request_id"`
		DeclineCode *string `json:"decline_code"`
	} `json:"error"`
}

// wantError asserts an error response: status, type, code, param ("" = null) and that
// request_id is the Request-Id header.
func wantError(t *testing.T, status int, header http.Header, body []byte, wantStatus int, wantType, wantCode, wantParam string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status = %d, want %d; body %s", status, wantStatus, body)
	}
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not the envelope: %v; body %s", err, body)
	}
	if e.Error.Type != wantType || e.Error.Code != wantCode {
		t.Fatalf("error = %s/%s, want %s/%s; body %s", e.Error.Type, e.Error.Code, wantType, wantCode, body)
	}
	gotParam := ""
	if e.Error.Param != nil {
		gotParam = *e.Error.Param
	}
	if gotParam != wantParam {
		t.Fatalf("param = %q, want %q; body %s", gotParam, wantParam, body)
	}
	if e.Error.RequestID == "" || e.Error.RequestID != header.Get("Request-Id") {
		t.Fatalf("request_id %q does not match Request-Id header %q", e.Error.RequestID, header.Get("Request-Id"))
	}
	if e.Error.Message == "" {
		t.Fatal("error message is empty")
	}
}

// wantErr is wantError for a typed client response (anything with StatusCode and Body).
func wantErr(t *testing.T, resp interface {
	StatusCode() int
}, httpResp *http.Response, body []byte, wantStatus int, wantType, wantCode, wantParam string) {
	t.Helper()
	wantError(t, resp.StatusCode(), httpResp.Header, body, wantStatus, wantType, wantCode, wantParam)
}

// sessionBody is a valid create-session body to start cases from.
func sessionBody() api.CheckoutSessionCreate {
	amount := int64(2500)
	return api.CheckoutSessionCreate{Amount: &amount, Currency: "eur", CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// compactJSON normalises JSON for byte comparisons.
func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
