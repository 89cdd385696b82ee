package webhookhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// A webhook delivery inside a unit of work sends nothing: its outcome is
// ports.ErrInsideTransaction.
func TestTheSenderRefusesToRunInsideATransaction(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	o := New(Options{AllowPrivate: true}).Send(ports.WithinTransaction(context.Background()), msg(srv.URL, core.EnvTest))
	if o.Acknowledged() || !strings.Contains(o.Err, ports.ErrInsideTransaction.Error()) || hits.Load() != 0 {
		t.Fatalf("outcome %+v, %d requests", o, hits.Load())
	}
}
