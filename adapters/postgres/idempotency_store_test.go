package postgres_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

const (
	idemTTL   = 24 * time.Hour
	idemLease = time.Minute
)

func claim(t *testing.T, s *postgres.IdempotencyStore, k ports.IdempotencyKey, hash string, now time.Time) *ports.IdempotencyRecord {
	t.Helper()
	rec, err := s.Claim(context.Background(), k, []byte(hash), now, now.Add(-idemTTL), now.Add(-idemLease))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func idemKey(scope core.Scope) ports.IdempotencyKey {
	return ports.IdempotencyKey{Scope: scope, Method: "POST", Path: "/v1/products", Key: "k-" + core.RandomBase62(8)}
}

func TestIdempotencyConcurrentClaimsHaveOneOwner(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.NewIdempotencyStore(db)
	k := idemKey(pgtest.Merchant(t, db))
	now := time.Now().UTC()
	const n = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	owners := 0
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rec, err := s.Claim(context.Background(), k, []byte("h"), now, now.Add(-idemTTL), now.Add(-idemLease))
			if err != nil {
				t.Error(err)
				return
			}
			if rec == nil {
				mu.Lock()
				owners++
				mu.Unlock()
			} else if !rec.InFlight {
				t.Error("loser saw a finished record")
			}
		}()
	}
	close(start)
	wg.Wait()
	if owners != 1 {
		t.Fatalf("%d owners, want 1", owners)
	}
}

func TestIdempotencyReplayRecord(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.NewIdempotencyStore(db)
	ctx := context.Background()
	k := idemKey(pgtest.Merchant(t, db))
	now := time.Now().UTC().Truncate(time.Microsecond)
	if rec := claim(t, s, k, "h1", now); rec != nil {
		t.Fatalf("first claim: %+v", rec)
	}
	rec := claim(t, s, k, "h2", now.Add(time.Second))
	if rec == nil || !rec.InFlight || string(rec.RequestHash) != "h1" {
		t.Fatalf("in flight: %+v", rec)
	}
	body := []byte(`{"id":"prod_1"}`)
	if err := s.Complete(ctx, k, 201, "application/json", body); err != nil {
		t.Fatal(err)
	}
	rec = claim(t, s, k, "h1", now.Add(2*time.Second))
	if rec == nil || rec.InFlight || rec.Status != 201 || rec.ContentType != "application/json" ||
		!bytes.Equal(rec.Body, body) || string(rec.RequestHash) != "h1" || !rec.CreatedAt.Equal(now) {
		t.Fatalf("replay: %+v", rec)
	}
	// A finished record is neither overwritten nor released.
	if err := s.Complete(ctx, k, 500, "text/plain", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, k); err != nil {
		t.Fatal(err)
	}
	// Even a finished record older than the lease stays: only in-flight claims go stale.
	rec = claim(t, s, k, "h1", now.Add(time.Hour))
	if rec == nil || rec.Status != 201 {
		t.Fatalf("finished record changed: %+v", rec)
	}
}

func TestIdempotencyReleaseFreesKey(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.NewIdempotencyStore(db)
	k := idemKey(pgtest.Merchant(t, db))
	now := time.Now().UTC()
	claim(t, s, k, "h", now)
	if err := s.Release(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if rec := claim(t, s, k, "h", now); rec != nil {
		t.Fatalf("released key still held: %+v", rec)
	}
}

func TestIdempotencyExpiryReplacement(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.NewIdempotencyStore(db)
	k := idemKey(pgtest.Merchant(t, db))
	t0 := time.Now().UTC()
	claim(t, s, k, "old", t0)
	if err := s.Complete(context.Background(), k, 200, "application/json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if rec := claim(t, s, k, "new", t0.Add(idemTTL-time.Second)); rec == nil {
		t.Fatal("record replaced before 24 h")
	}
	if rec := claim(t, s, k, "new", t0.Add(idemTTL+time.Second)); rec != nil {
		t.Fatalf("expired record not replaced: %+v", rec)
	}
	rec := claim(t, s, k, "other", t0.Add(idemTTL+2*time.Second))
	if rec == nil || !rec.InFlight || string(rec.RequestHash) != "new" || rec.Status != 0 || rec.Body != nil {
		t.Fatalf("replacement not fresh: %+v", rec)
	}
}

func TestIdempotencyStaleClaimReplacement(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.NewIdempotencyStore(db)
	k := idemKey(pgtest.Merchant(t, db))
	t0 := time.Now().UTC()
	claim(t, s, k, "h", t0)
	if rec := claim(t, s, k, "h", t0.Add(idemLease-time.Second)); rec == nil || !rec.InFlight {
		t.Fatal("live claim taken over")
	}
	if rec := claim(t, s, k, "h", t0.Add(idemLease+time.Second)); rec != nil {
		t.Fatalf("stale claim not replaced: %+v", rec)
	}
	// Many callers racing for one stale claim: still one owner.
	t1 := t0.Add(10 * idemLease)
	var wg sync.WaitGroup
	var mu sync.Mutex
	owners := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, err := s.Claim(context.Background(), k, []byte("h"), t1, t1.Add(-idemTTL), t1.Add(-idemLease))
			if err != nil {
				t.Error(err)
			}
			if rec == nil {
				mu.Lock()
				owners++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if owners != 1 {
		t.Fatalf("%d owners of a stale claim, want 1", owners)
	}
}

func TestIdempotencyPurge(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.NewIdempotencyStore(db)
	scope := pgtest.Merchant(t, db)
	t0 := time.Now().UTC()
	old1, old2, fresh := idemKey(scope), idemKey(scope), idemKey(scope)
	claim(t, s, old1, "h", t0.Add(-25*time.Hour))
	claim(t, s, old2, "h", t0.Add(-30*time.Hour))
	claim(t, s, fresh, "h", t0)
	n, err := s.Purge(context.Background(), t0.Add(-idemTTL))
	if err != nil || n != 2 {
		t.Fatalf("purged %d, %v", n, err)
	}
	if rec := claim(t, s, fresh, "h", t0); rec == nil {
		t.Fatal("fresh record purged")
	}
	if rec := claim(t, s, old1, "h", t0); rec != nil {
		t.Fatal("old record survived purge")
	}
}

func TestIdempotencyScopeSeparation(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.NewIdempotencyStore(db)
	scope := pgtest.Merchant(t, db)
	other := pgtest.Merchant(t, db)
	now := time.Now().UTC()
	base := idemKey(scope)
	claim(t, s, base, "h", now)
	live := base
	live.Scope.Env = core.EnvLive
	otherMerchant := base
	otherMerchant.Scope = other
	otherPath := base
	otherPath.Path = "/v1/subscriptions"
	otherMethod := base
	otherMethod.Method = "PUT"
	for name, k := range map[string]ports.IdempotencyKey{"env": live, "merchant": otherMerchant, "path": otherPath, "method": otherMethod} {
		if rec := claim(t, s, k, "h", now); rec != nil {
			t.Errorf("%s: key shared across scopes: %+v", name, rec)
		}
	}
	if rec := claim(t, s, base, "h", now); rec == nil {
		t.Fatal("base claim lost")
	}
}
