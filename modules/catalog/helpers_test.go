package catalog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var (
	testScope = core.Scope{MerchantID: "mer_test", Env: core.EnvTest}
	testNow   = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
)

func ptr[T any](v T) *T { return &v }

// wantErr checks that err is a *core.Error with the given type, code and param; an empty want
// code means no error.
func wantErr(t *testing.T, err error, typ core.ErrorType, code, param string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var ce *core.Error
	if !errors.As(err, &ce) {
		t.Fatalf("want %s/%s (%s), got %v", typ, code, param, err)
	}
	if ce.Type != typ || ce.Code != code || ce.Param != param {
		t.Fatalf("want %s/%s (%s), got %s/%s (%s): %s", typ, code, param, ce.Type, ce.Code, ce.Param, ce.Message)
	}
}

func metadataOf(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m["k"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	return m
}

func stringsOf(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
