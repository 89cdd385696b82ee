package conformance

import (
	"context"
	"sync"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

const csExpiredEvent = "checkout.session.expired"

// csExpire posts expire and returns the response.
func csExpire(t *testing.T, c *api.ClientWithResponses, id string) *api.ExpireCheckoutSessionResponse {
	t.Helper()
	resp, err := c.ExpireCheckoutSessionWithResponse(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// csWantOneExpiredEvent asserts exactly one checkout.session.expired event for s, whose
// payload is the expired session, and returns it.
func csWantOneExpiredEvent(t *testing.T, c *api.ClientWithResponses, s *api.CheckoutSession) api.Event {
	t.Helper()
	evs := evtForSession(t, c, csExpiredEvent, s.Id)
	if len(evs) != 1 {
		t.Fatalf("%d %s events for %s, want exactly 1", len(evs), csExpiredEvent, s.Id)
	}
	e := evs[0]
	if e.Type != csExpiredEvent || e.Object != "event" || e.Environment != s.Mode {
		t.Fatalf("event = %+v", e)
	}
	obj := e.Data.Object
	if obj["object"] != "checkout.session" || obj["status"] != "expired" || obj["amount"] != float64(s.Amount) {
		t.Fatalf("data.object = %v, want the expired session", obj)
	}
	if obj["id"] != s.Id || obj["mode"] != string(s.Mode) || obj["expires_at"] != float64(s.ExpiresAt) {
		t.Fatalf("data.object = %v, want session %s", obj, s.Id)
	}
	return e
}

func TestCheckoutStates(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "3.1", "expire moves an open session to expired with exactly one checkout.session.expired event", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		resp := csExpire(t, m.Test, s.Id)
		if resp.JSON200 == nil {
			t.Fatalf("expire: %d %s", resp.StatusCode(), resp.Body)
		}
		x := resp.JSON200
		if x.Id != s.Id || x.Status != "expired" || x.ExpiresAt != s.ExpiresAt || x.Payment != nil {
			t.Fatalf("expired session = %+v", x)
		}
		if g := csGet(t, m.Test, s.Id); g.Status != "expired" {
			t.Fatalf("retrieve after expire: status %s", g.Status)
		}
		e := csWantOneExpiredEvent(t, m.Test, s)
		if e.Created < s.Created || e.Created > s.ExpiresAt {
			t.Fatalf("event created %d outside [created %d, expires_at %d]", e.Created, s.Created, s.ExpiresAt)
		}
	})

	harness.Rule(t, "D6", "expire on an expired session gives 422 invalid_state/session_expired and no second event", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		if r := csExpire(t, m.Test, s.Id); r.StatusCode() != 200 {
			t.Fatalf("first expire: %d %s", r.StatusCode(), r.Body)
		}
		for range 2 {
			r := csExpire(t, m.Test, s.Id)
			wantErr(t, r, r.HTTPResponse, r.Body, 422, "invalid_state", "session_expired", "")
		}
		csWantOneExpiredEvent(t, m.Test, s)
	})

	harness.Rule(t, "D6", "concurrent expire calls expire once: one 200, the rest 422 session_expired, one event", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		var wg sync.WaitGroup
		codes := make([]int, 8)
		for i := range codes {
			wg.Go(func() {
				r, err := m.Test.ExpireCheckoutSessionWithResponse(context.Background(), s.Id, nil)
				if err != nil {
					t.Error(err)
					return
				}
				codes[i] = r.StatusCode()
			})
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			switch c {
			case 200:
				ok++
			case 422:
			default:
				t.Fatalf("statuses %v, want one 200 and 422s", codes)
			}
		}
		if ok != 1 {
			t.Fatalf("statuses %v, want exactly one 200", codes)
		}
		csWantOneExpiredEvent(t, m.Test, s)
	})

	harness.Rule(t, "D6", "a live session expires in live: the event is live and invisible to the test key", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Live, sessionBody())
		if r := csExpire(t, m.Live, s.Id); r.JSON200 == nil || r.JSON200.Mode != "live" {
			t.Fatalf("live expire: %d %s", r.StatusCode(), r.Body)
		}
		e := csWantOneExpiredEvent(t, m.Live, s)
		if e.Environment != "live" {
			t.Fatalf("event environment = %s", e.Environment)
		}
		if evs := evtForSession(t, m.Test, csExpiredEvent, s.Id); len(evs) != 0 {
			t.Fatalf("test key sees %d live events", len(evs))
		}
	})

	harness.Rule(t, "D6", "lazy expiry: 24 h after creation GET shows expired, one event despite concurrent reads and a later expire", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		clockAdvance(t, m.Test, 86400)
		var wg sync.WaitGroup
		statuses := make([]api.CheckoutSessionStatus, 10)
		for i := range statuses {
			wg.Go(func() {
				r, err := m.Test.RetrieveCheckoutSessionWithResponse(context.Background(), s.Id)
				if err != nil {
					t.Error(err)
					return
				}
				if r.JSON200 == nil {
					t.Errorf("retrieve: %d %s", r.StatusCode(), r.Body)
					return
				}
				statuses[i] = r.JSON200.Status
			})
		}
		wg.Wait()
		for _, st := range statuses {
			if st != "expired" {
				t.Fatalf("statuses after 24 h = %v, want all expired", statuses)
			}
		}
		r := csExpire(t, m.Test, s.Id)
		wantErr(t, r, r.HTTPResponse, r.Body, 422, "invalid_state", "session_expired", "")
		e := csWantOneExpiredEvent(t, m.Test, s)
		if e.Created != s.ExpiresAt {
			t.Fatalf("event created = %d, want the session's expires_at %d", e.Created, s.ExpiresAt)
		}
	})

	harness.Rule(t, "D12", "the clock advance itself expires due sessions: the event exists without any read of the session", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		other := csCreate(t, m.Test, sessionBody())
		clockAdvance(t, m.Test, 86401)
		// No GET of either session: the events are in the outbox when advance returns.
		for _, x := range []*api.CheckoutSession{s, other} {
			evs := evtForSession(t, m.Test, csExpiredEvent, x.Id)
			if len(evs) != 1 {
				t.Fatalf("%d expired events for %s right after the advance, want 1", len(evs), x.Id)
			}
			if evs[0].Data.Object["status"] != "expired" {
				t.Fatalf("data.object.status = %v", evs[0].Data.Object["status"])
			}
		}
		// Reading afterwards adds nothing.
		if g := csGet(t, m.Test, s.Id); g.Status != "expired" {
			t.Fatalf("status = %s", g.Status)
		}
		csWantOneExpiredEvent(t, m.Test, s)
	})

	harness.Rule(t, "D12", "a session created on a frozen clock lives exactly 86400 s of clock time", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		now := clockFreeze(t, m.Test)
		s := csCreate(t, m.Test, sessionBody())
		if s.Created != now || s.ExpiresAt != now+86400 {
			t.Fatalf("created/expires_at = %d/%d, want clock now %d / %d", s.Created, s.ExpiresAt, now, now+86400)
		}
		clockAdvance(t, m.Test, 86399)
		if g := csGet(t, m.Test, s.Id); g.Status != "open" {
			t.Fatalf("status 86399 s after creation = %s, want open", g.Status)
		}
		if evs := evtForSession(t, m.Test, csExpiredEvent, s.Id); len(evs) != 0 {
			t.Fatalf("%d expired events before the end of the lifetime", len(evs))
		}
		clockAdvance(t, m.Test, 1)
		e := csWantOneExpiredEvent(t, m.Test, s)
		if e.Created != s.ExpiresAt {
			t.Fatalf("event created = %d, want expires_at %d", e.Created, s.ExpiresAt)
		}
		if g := csGet(t, m.Test, s.Id); g.Status != "expired" {
			t.Fatalf("status at expires_at = %s, want expired", g.Status)
		}
	})

	harness.Rule(t, "D12", "expiry events of one advance come in time order", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		clockFreeze(t, m.Test)
		first := csCreate(t, m.Test, sessionBody())
		clockAdvance(t, m.Test, 3600)
		second := csCreate(t, m.Test, sessionBody())
		clockAdvance(t, m.Test, 2*86400)
		evs := evtList(t, m.Test, csExpiredEvent, 10).Data
		if len(evs) != 2 {
			t.Fatalf("%d expired events, want 2", len(evs))
		}
		// Newest first: the second session's expiry is the newer event.
		if evs[0].Data.Object["id"] != second.Id || evs[1].Data.Object["id"] != first.Id {
			t.Fatalf("events = %v, %v; want %s then %s (newest first)", evs[0].Data.Object["id"], evs[1].Data.Object["id"], second.Id, first.Id)
		}
		if evs[0].Created != second.ExpiresAt || evs[1].Created != first.ExpiresAt {
			t.Fatalf("event times %d, %d; want %d, %d", evs[0].Created, evs[1].Created, second.ExpiresAt, first.ExpiresAt)
		}
	})

	harness.Rule(t, "D6", "the list shows lazily expired sessions as expired and filters on it", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		old := csCreate(t, m.Test, sessionBody())
		clockAdvance(t, m.Test, 86400)
		fresh := csCreate(t, m.Test, sessionBody())
		ids := func(st api.CheckoutSessionStatus) []string {
			r, err := m.Test.ListCheckoutSessionsWithResponse(context.Background(), &api.ListCheckoutSessionsParams{Status: &st})
			if err != nil {
				t.Fatal(err)
			}
			if r.JSON200 == nil {
				t.Fatalf("list: %d %s", r.StatusCode(), r.Body)
			}
			var out []string
			for _, s := range r.JSON200.Data {
				if s.Status != st {
					t.Fatalf("status filter %s returned a %s session", st, s.Status)
				}
				out = append(out, s.Id)
			}
			return out
		}
		if got := ids("expired"); len(got) != 1 || got[0] != old.Id {
			t.Fatalf("expired = %v, want [%s]", got, old.Id)
		}
		if got := ids("open"); len(got) != 1 || got[0] != fresh.Id {
			t.Fatalf("open = %v, want [%s]", got, fresh.Id)
		}
		if got := ids("complete"); len(got) != 0 {
			t.Fatalf("complete = %v, want none", got)
		}
		csWantOneExpiredEvent(t, m.Test, old)
	})
}
