package conformance

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

var evtIDPattern = regexp.MustCompile(`^evt_[0-9A-Za-z]{24}$`)

// evtExpiredSessions creates n sessions and expires them in order; it returns the session ids
// in expiry order.
func evtExpiredSessions(t *testing.T, c *api.ClientWithResponses, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		s := csCreate(t, c, sessionBody())
		if r := csExpire(t, c, s.Id); r.StatusCode() != 200 {
			t.Fatalf("expire: %d %s", r.StatusCode(), r.Body)
		}
		ids = append(ids, s.Id)
	}
	return ids
}

func evtSessionIDs(l api.EventList) []string {
	var out []string
	for _, e := range l.Data {
		id, _ := e.Data.Object["id"].(string)
		out = append(out, id)
	}
	return out
}

func TestEvents(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "D10", "events are listed newest first in the list envelope", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		ids := evtExpiredSessions(t, m.Test, 3)
		l := evtList(t, m.Test, "", 0)
		if l.Object != "list" || l.Url != "/v1/events" || l.HasMore {
			t.Fatalf("envelope object %q url %q has_more %v", l.Object, l.Url, l.HasMore)
		}
		if got, want := evtSessionIDs(l), []string{ids[2], ids[1], ids[0]}; !reflect.DeepEqual(got, want) {
			t.Fatalf("events for %v, want %v (newest first)", got, want)
		}
		for i := 1; i < len(l.Data); i++ {
			if l.Data[i].Created > l.Data[i-1].Created {
				t.Fatalf("event %d is newer than event %d", i, i-1)
			}
		}
	})

	harness.Rule(t, "D10", "type filters on the exact event type", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		evtExpiredSessions(t, m.Test, 2)
		if l := evtList(t, m.Test, csExpiredEvent, 0); len(l.Data) != 2 {
			t.Fatalf("%d events of type %s, want 2", len(l.Data), csExpiredEvent)
		}
		for _, typ := range []string{"checkout.session", "checkout.session.completed", "checkout.session.*", "CHECKOUT.SESSION.EXPIRED"} {
			if l := evtList(t, m.Test, typ, 0); len(l.Data) != 0 {
				t.Fatalf("type %q matched %d events", typ, len(l.Data))
			}
		}
	})

	harness.Rule(t, "D10", "limit 1..100 pages with has_more and cursors; outside gives limit_invalid", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		ids := evtExpiredSessions(t, m.Test, 3)
		l := evtList(t, m.Test, "", 1)
		if len(l.Data) != 1 || !l.HasMore || l.Data[0].Data.Object["id"] != ids[2] {
			t.Fatalf("limit 1: %v has_more %v", evtSessionIDs(l), l.HasMore)
		}
		if l := evtList(t, m.Test, "", 100); len(l.Data) != 3 || l.HasMore {
			t.Fatalf("limit 100: %d has_more %v", len(l.Data), l.HasMore)
		}
		after := l.Data[0].Id
		r, err := m.Test.ListEventsWithResponse(context.Background(), &api.ListEventsParams{Limit: ptr(1), StartingAfter: &after})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || len(r.JSON200.Data) != 1 || r.JSON200.Data[0].Data.Object["id"] != ids[1] || !r.JSON200.HasMore {
			t.Fatalf("starting_after: %d %s", r.StatusCode(), r.Body)
		}
		for _, q := range []struct{ query, code, param string }{
			{"limit=0", "limit_invalid", "limit"},
			{"limit=101", "limit_invalid", "limit"},
			{"starting_after=evt_" + core.RandomBase62(24), "starting_after_invalid", "starting_after"},
			{"ending_before=evt_" + core.RandomBase62(24), "ending_before_invalid", "ending_before"},
		} {
			csWantErr(t, raw(t, "GET", "/v1/events?"+q.query, m.TestKey, "", nil), 400, "invalid_request", q.code, q.param)
		}
	})

	harness.Rule(t, "D10", "retrieve returns the event envelope; data.object is the session as the API shows it", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		ids := evtExpiredSessions(t, m.Test, 1)
		listed := evtList(t, m.Test, csExpiredEvent, 0).Data[0]
		r, err := m.Test.RetrieveEventWithResponse(context.Background(), listed.Id)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil {
			t.Fatalf("retrieve event: %d %s", r.StatusCode(), r.Body)
		}
		e := r.JSON200
		if !evtIDPattern.MatchString(e.Id) || e.Object != "event" || e.Type != csExpiredEvent || e.Environment != "test" || e.ApiVersion != "2026-11-01" {
			t.Fatalf("event = %+v", e)
		}
		if !reflect.DeepEqual(*e, listed) {
			t.Fatalf("retrieved event differs from listed:\n%+v\n%+v", *e, listed)
		}
		// data.object is exactly the retrieve body of the expired session.
		g := raw(t, "GET", "/v1/checkout/sessions/"+ids[0], m.TestKey, "", nil)
		var session map[string]any
		if err := json.Unmarshal(g.Body, &session); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(session, e.Data.Object) {
			t.Fatalf("data.object = %v\nretrieve = %v", e.Data.Object, session)
		}
		s := csGet(t, m.Test, ids[0])
		if e.Created < s.Created || e.Created > s.ExpiresAt {
			t.Fatalf("event created %d outside the session's life [%d, %d]", e.Created, s.Created, s.ExpiresAt)
		}
	})

	harness.Rule(t, "D3", "retrieve of an unknown event gives 404 not_found/event_not_found param id", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, id := range []string{"evt_" + core.RandomBase62(24), "nope"} {
			r, err := m.Test.RetrieveEventWithResponse(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "event_not_found", "id")
		}
	})

	harness.Rule(t, "ISO", "another merchant's event id gives 404 event_not_found and is not listed", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		evtExpiredSessions(t, a.Test, 1)
		evID := evtList(t, a.Test, "", 0).Data[0].Id
		r, err := b.Test.RetrieveEventWithResponse(context.Background(), evID)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "event_not_found", "id")
		if l := evtList(t, b.Test, "", 0); len(l.Data) != 0 {
			t.Fatalf("merchant B lists %d events", len(l.Data))
		}
		csWantErr(t, raw(t, "GET", "/v1/events?starting_after="+evID, b.TestKey, "", nil), 400, "invalid_request", "starting_after_invalid", "starting_after")
	})

	harness.Rule(t, "ISO", "the live key does not see test events", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		evtExpiredSessions(t, m.Test, 1)
		evID := evtList(t, m.Test, "", 0).Data[0].Id
		if l := evtList(t, m.Live, "", 0); len(l.Data) != 0 {
			t.Fatalf("live key lists %d test events", len(l.Data))
		}
		r, err := m.Live.RetrieveEventWithResponse(context.Background(), evID)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "event_not_found", "id")
		// A live event is live, and the test key does not see it.
		evtExpiredSessions(t, m.Live, 1)
		ll := evtList(t, m.Live, "", 0)
		if len(ll.Data) != 1 || ll.Data[0].Environment != "live" {
			t.Fatalf("live events = %+v", ll.Data)
		}
		if l := evtList(t, m.Test, "", 0); len(l.Data) != 1 {
			t.Fatalf("test key lists %d events, want its 1", len(l.Data))
		}
	})
}
