package fx

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/kassa-pay/kassa/ports"
)

// A refresh of the rates inside a unit of work fetches nothing: ports.ErrInsideTransaction.
func TestTheRefreshRefusesToRunInsideATransaction(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	r := &Refresher{Rates: NewSample(), URL: srv.URL, Client: srv.Client()}
	if err := r.Fetch(ports.WithinTransaction(context.Background())); !errors.Is(err, ports.ErrInsideTransaction) || hits.Load() != 0 {
		t.Fatalf("Fetch: %v, %d requests", err, hits.Load())
	}
}
