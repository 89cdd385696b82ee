package fx

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/ports"
)

func TestMergeKeepsHistoryAndTakesNewFigures(t *testing.T) {
	t.Parallel()
	e := NewSample()
	if err := e.Merge(strings.NewReader(dailyDoc)); err != nil {
		t.Fatal(err)
	}
	first, last := e.Range()
	if !first.Equal(date(2026, 11, 12)) || !last.Equal(date(2026, 11, 23)) {
		t.Fatalf("range after merge: %v … %v", first, last)
	}
	// A sample day is still priced as before; the daily file's day is new.
	if _, err := e.Rate(context.Background(), date(2026, 11, 13), "EUR", "USD"); err != nil {
		t.Fatalf("history lost: %v", err)
	}
	r, err := e.Rate(context.Background(), date(2026, 11, 24), "EUR", "USD")
	if err != nil || r.Value().Cmp(rat("1.17")) != 0 {
		t.Fatalf("new day: %v %v", r, err)
	}
	if err := e.Merge(strings.NewReader("<html>maintenance</html>")); err == nil {
		t.Fatal("merged HTML")
	}
	if _, last := e.Range(); !last.Equal(date(2026, 11, 23)) {
		t.Fatalf("a failed merge changed the table: %v", last)
	}
}

func TestRefresherFetchesMergesAndSurvivesFailures(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case 2:
			w.Write([]byte("<html>not rates</html>"))
		default:
			w.Header().Set("Content-Type", "text/xml")
			w.Write([]byte(dailyDoc))
		}
	}))
	defer srv.Close()
	e := NewSample()
	r := &Refresher{Rates: e, URL: srv.URL, Client: srv.Client()}
	ctx := context.Background()
	if err := r.Fetch(ctx); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("503 answer: %v", err)
	}
	if err := r.Fetch(ctx); err == nil {
		t.Fatal("accepted a non-ECB document")
	}
	if _, last := e.Range(); !last.Equal(date(2026, 11, 20)) {
		t.Fatalf("failed fetches changed the table: %v", last)
	}
	if err := r.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Rate(ctx, date(2026, 11, 23), "EUR", "JPY"); err != nil {
		t.Fatalf("after refresh: %v", err)
	}
}

func TestRefresherRunRetriesUntilItSucceeds(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusBadGateway)
			return
		}
		w.Write([]byte(dailyDoc))
	}))
	defer srv.Close()
	e, err := New(bytes.NewReader(sampleXML))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&Refresher{Rates: e, URL: srv.URL, RetryAfter: time.Millisecond, Every: time.Hour}).Run(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := e.Rate(ctx, date(2026, 11, 24), "EUR", "USD"); err == nil {
			if _, l := e.Range(); l.Equal(date(2026, 11, 23)) {
				break
			}
		} else if !errors.Is(err, ports.ErrFXNoRateForDay) && !errors.Is(err, ports.ErrFXCurrencyNotQuoted) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("never refreshed after %d calls", calls.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if calls.Load() < 3 {
		t.Fatalf("calls %d", calls.Load())
	}
}

func TestRefresherRefusesOversizedDocuments(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte(" "), 1<<20)
		for range 33 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	r := &Refresher{Rates: NewSample(), URL: srv.URL}
	if err := r.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "32 MiB") {
		t.Fatalf("oversized: %v", err)
	}
}

// A refresher whose caller has just fetched waits Every before its first fetch.
func TestRefresherFetchedWaitsBeforeFirstFetch(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(dailyDoc))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	(&Refresher{Rates: NewSample(), URL: srv.URL, Every: time.Hour, Fetched: true}).Run(ctx)
	if n := calls.Load(); n != 0 {
		t.Fatalf("fetched %d times", n)
	}
}
