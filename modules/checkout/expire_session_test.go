package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

func mustCreate(t *testing.T, svc *Service, scope core.Scope) *Session {
	t.Helper()
	s, err := svc.Create(context.Background(), core.Caller{Scope: scope, Onboarded: true}, validInput())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExpireTransitions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		status  Status
		advance time.Duration
		wantErr error
		events  int // checkout.session.expired events written by the call
	}{
		{name: "open", status: StatusOpen, events: 1},
		// Past its lifetime the session is expired (D6) even if nobody noticed yet: the call
		// records the expiry with its one event and answers session_expired.
		{name: "open and already due", status: StatusOpen, advance: 25 * time.Hour, wantErr: ErrSessionExpired, events: 1},
		{name: "complete", status: StatusComplete, wantErr: ErrSessionAlreadyCompleted},
		{name: "expired", status: StatusExpired, wantErr: ErrSessionExpired},
		{name: "canceled", status: StatusCanceled, wantErr: ErrSessionExpired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, store, clocks := newTestService(t)
			s := mustCreate(t, svc, testScope)
			store.forceStatus(s.ID(), tc.status)
			clocks.set(t0.Add(tc.advance))
			got, err := svc.Expire(context.Background(), testScope, s.ID())
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("want %v, got %v", tc.wantErr, err)
				}
				var ce *core.Error
				if errors.As(err, &ce) && ce.Type != core.TypeInvalidState {
					t.Fatalf("type %s", ce.Type)
				}
				if n := store.eventCount(EventExpired); n != tc.events {
					t.Fatalf("%d events, want %d", n, tc.events)
				}
				if tc.events == 1 {
					if ev := store.events()[0]; !ev.Created.Equal(s.ExpiresAt()) {
						t.Errorf("event at %v, want expires_at %v", ev.Created, s.ExpiresAt())
					}
					if got, err := svc.Get(context.Background(), testScope, s.ID()); err != nil || got.Status() != StatusExpired {
						t.Fatalf("after a lapsed expire: %v %v", got, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status() != StatusExpired {
				t.Fatalf("status %s", got.Status())
			}
			if n := store.eventCount(EventExpired); n != 1 {
				t.Fatalf("%d events, want 1", n)
			}
			ev := store.events()[0]
			if !ev.Created.Equal(t0) || ev.Scope != testScope {
				t.Errorf("event at %v scope %v", ev.Created, ev.Scope)
			}
			if sub, ok := ev.Subject.(SessionEvent); !ok || sub.Session.Status() != StatusExpired || ev.ObjectID != s.ID() {
				t.Errorf("subject %+v", ev.Subject)
			}
			if _, err := svc.Expire(context.Background(), testScope, s.ID()); !errors.Is(err, ErrSessionExpired) {
				t.Fatalf("second expire: %v", err)
			}
		})
	}
}

func TestExpireUnknownOrForeign(t *testing.T) {
	t.Parallel()
	svc, _, _ := newTestService(t)
	s := mustCreate(t, svc, testScope)
	for _, scope := range []core.Scope{
		{MerchantID: "mer_other", Env: core.EnvTest},
		{MerchantID: testScope.MerchantID, Env: core.EnvLive},
	} {
		if _, err := svc.Expire(context.Background(), scope, s.ID()); !errors.Is(err, core.NotFound("session", "", "")) {
			t.Fatalf("%v: %v", scope, err)
		}
	}
}

func TestGetLazyExpiry(t *testing.T) {
	t.Parallel()
	svc, store, clocks := newTestService(t)
	s := mustCreate(t, svc, testScope)
	ctx := context.Background()

	clocks.set(s.ExpiresAt().Add(-time.Second))
	got, err := svc.Get(ctx, testScope, s.ID())
	if err != nil || got.Status() != StatusOpen {
		t.Fatalf("before expiry: %v %v", got, err)
	}
	clocks.set(s.ExpiresAt()) // expires_at ≤ now: due
	for range 3 {
		got, err = svc.Get(ctx, testScope, s.ID())
		if err != nil || got.Status() != StatusExpired {
			t.Fatalf("after expiry: %v %v", got, err)
		}
	}
	if n := store.eventCount(EventExpired); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	if !store.events()[0].Created.Equal(s.ExpiresAt()) {
		t.Errorf("event at %v", store.events()[0].Created)
	}
}

func TestListLazyExpiryAndFilter(t *testing.T) {
	t.Parallel()
	svc, store, clocks := newTestService(t)
	ctx := context.Background()
	old := mustCreate(t, svc, testScope)
	clocks.set(t0.Add(2 * time.Hour))
	fresh := mustCreate(t, svc, testScope)
	clocks.set(old.ExpiresAt().Add(time.Minute))

	open, err := svc.List(ctx, testScope, core.ListQuery{}, "open")
	if err != nil {
		t.Fatal(err)
	}
	if len(open.Items) != 1 || open.Items[0].ID() != fresh.ID() {
		t.Fatalf("open page %v", open.Items)
	}
	all, err := svc.List(ctx, testScope, core.ListQuery{}, "")
	if err != nil || len(all.Items) != 2 || all.Items[0].ID() != fresh.ID() || all.Items[1].Status() != StatusExpired {
		t.Fatalf("all page %v %v", all.Items, err)
	}
	expired, err := svc.List(ctx, testScope, core.ListQuery{}, "expired")
	if err != nil || len(expired.Items) != 1 || expired.Items[0].ID() != old.ID() || expired.Items[0].Status() != StatusExpired {
		t.Fatalf("expired page %v %v", expired.Items, err)
	}
	// A list writes nothing: the expiry and its one event are the sweep's, or a Get's.
	if n := store.eventCount(EventExpired); n != 0 {
		t.Fatalf("%d events after listing, want 0", n)
	}
	if got, err := svc.Get(ctx, testScope, old.ID()); err != nil || got.Status() != StatusExpired {
		t.Fatalf("get %v %v", got, err)
	}
	if n := store.eventCount(EventExpired); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	if _, err := svc.List(ctx, testScope, core.ListQuery{}, "paid"); !errors.Is(err, core.InvalidField("status", "")) {
		t.Fatalf("bad status: %v", err)
	}
	if _, err := svc.List(ctx, testScope, core.ListQuery{Limit: 101}, ""); !errors.Is(err, core.InvalidField("limit", "")) {
		t.Fatalf("bad limit: %v", err)
	}
}

func TestProcessDue(t *testing.T) {
	t.Parallel()
	svc, store, _ := newTestService(t)
	ctx := context.Background()
	frozenScope := core.Scope{MerchantID: "mer_frozen", Env: core.EnvTest}
	liveScope := core.Scope{MerchantID: testScope.MerchantID, Env: core.EnvLive}
	for range sweepBatch + 5 { // more than one batch
		mustCreate(t, svc, testScope)
	}
	mustCreate(t, svc, liveScope)
	mustCreate(t, svc, frozenScope)
	store.frozen[frozenScope.MerchantID] = true

	n, err := svc.ProcessDue(ctx, nil, t0.Add(24*time.Hour-time.Second))
	if err != nil || n != 0 {
		t.Fatalf("not yet due: %d %v", n, err)
	}
	n, err = svc.ProcessDue(ctx, nil, t0.Add(24*time.Hour))
	if err != nil || n != sweepBatch+6 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	n, err = svc.ProcessDue(ctx, &frozenScope, t0.Add(48*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("scoped sweep: %d %v", n, err)
	}
	if got := store.eventCount(EventExpired); got != sweepBatch+7 {
		t.Fatalf("%d events", got)
	}
	if n, _ = svc.ProcessDue(ctx, nil, t0.Add(72*time.Hour)); n != 0 {
		t.Fatalf("second sweep expired %d", n)
	}
}
