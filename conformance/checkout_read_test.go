package conformance

import (
	"context"
	"fmt"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// csListIDs lists sessions with params and returns the ids and has_more.
func csListIDs(t *testing.T, c *api.ClientWithResponses, p api.ListCheckoutSessionsParams) ([]string, bool) {
	t.Helper()
	r, err := c.ListCheckoutSessionsWithResponse(context.Background(), &p)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("list sessions: %d %s", r.StatusCode(), r.Body)
	}
	if r.JSON200.Object != "list" || r.JSON200.Url != "/v1/checkout/sessions" {
		t.Fatalf("list envelope object %q url %q", r.JSON200.Object, r.JSON200.Url)
	}
	ids := make([]string, 0, len(r.JSON200.Data))
	for _, s := range r.JSON200.Data {
		ids = append(ids, s.Id)
	}
	return ids, r.JSON200.HasMore
}

func csSame(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestCheckoutRetrieveList(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "4.1", "retrieve returns the session with payment null while open", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		g := csGet(t, m.Test, s.Id)
		if g.Id != s.Id || g.Status != "open" || g.ClientSecret != s.ClientSecret || g.Created != s.Created || g.ExpiresAt != s.ExpiresAt {
			t.Fatalf("retrieved %+v, created %+v", g, s)
		}
		r := raw(t, "GET", "/v1/checkout/sessions/"+s.Id, m.TestKey, "", nil)
		if r.Status != 200 || !jsonHasNull(t, r.Body, "payment") {
			t.Fatalf("payment is not null in %s", r.Body)
		}
	})

	harness.Rule(t, "D3", "retrieve of an unknown id gives 404 not_found/session_not_found param id", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		for _, id := range []string{"cs_" + core.RandomBase62(24), "cs_x", "prod_" + core.RandomBase62(24)} {
			r, err := m.Test.RetrieveCheckoutSessionWithResponse(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "session_not_found", "id")
		}
		r := csExpire(t, m.Test, "cs_"+core.RandomBase62(24))
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "session_not_found", "id")
	})

	harness.Rule(t, "D8", "list is newest first and pages with limit, starting_after and ending_before", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		var ids []string // newest first
		for range 5 {
			ids = append([]string{csCreate(t, m.Test, sessionBody()).Id}, ids...)
		}
		all, more := csListIDs(t, m.Test, api.ListCheckoutSessionsParams{})
		if !csSame(all, ids) || more {
			t.Fatalf("list = %v has_more %v, want %v false", all, more, ids)
		}
		page, more := csListIDs(t, m.Test, api.ListCheckoutSessionsParams{Limit: ptr(2)})
		if !csSame(page, ids[:2]) || !more {
			t.Fatalf("page 1 = %v %v", page, more)
		}
		page, more = csListIDs(t, m.Test, api.ListCheckoutSessionsParams{Limit: ptr(2), StartingAfter: ptr(ids[1])})
		if !csSame(page, ids[2:4]) || !more {
			t.Fatalf("page 2 = %v %v", page, more)
		}
		page, more = csListIDs(t, m.Test, api.ListCheckoutSessionsParams{Limit: ptr(2), StartingAfter: ptr(ids[3])})
		if !csSame(page, ids[4:]) || more {
			t.Fatalf("page 3 = %v %v", page, more)
		}
		page, more = csListIDs(t, m.Test, api.ListCheckoutSessionsParams{Limit: ptr(2), EndingBefore: ptr(ids[4])})
		if !csSame(page, ids[2:4]) || !more {
			t.Fatalf("ending_before = %v %v, want %v true", page, more, ids[2:4])
		}
		page, _ = csListIDs(t, m.Test, api.ListCheckoutSessionsParams{Limit: ptr(100)})
		if !csSame(page, ids) {
			t.Fatalf("limit 100 = %v", page)
		}
		page, _ = csListIDs(t, m.Test, api.ListCheckoutSessionsParams{Limit: ptr(1)})
		if !csSame(page, ids[:1]) {
			t.Fatalf("limit 1 = %v", page)
		}
	})

	harness.Rule(t, "D8", "list parameters out of range give 400 with the parameter", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		for _, q := range []struct{ query, code, param string }{
			{"limit=0", "limit_invalid", "limit"},
			{"limit=101", "limit_invalid", "limit"},
			{"limit=ten", "limit_invalid", "limit"},
			{"status=paid", "status_invalid", "status"},
			{"starting_after=cs_" + core.RandomBase62(24), "starting_after_invalid", "starting_after"},
			{"ending_before=cs_" + core.RandomBase62(24), "ending_before_invalid", "ending_before"},
			{"starting_after=" + s.Id + "&ending_before=" + s.Id, "ending_before_invalid", "ending_before"},
		} {
			r := raw(t, "GET", "/v1/checkout/sessions?"+q.query, m.TestKey, "", nil)
			csWantErr(t, r, 400, "invalid_request", q.code, q.param)
		}
	})

	harness.Rule(t, "ISO", "a cursor of another merchant's session is unknown here", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		s := csCreate(t, a.Test, sessionBody())
		csCreate(t, b.Test, sessionBody())
		r := raw(t, "GET", "/v1/checkout/sessions?starting_after="+s.Id, b.TestKey, "", nil)
		csWantErr(t, r, 400, "invalid_request", "starting_after_invalid", "starting_after")
	})
}

func TestCheckoutIsolation(t *testing.T) {
	t.Parallel()

	harness.Rule(t, "ISO", "another merchant gets 404 session_not_found on retrieve and expire, not 422", func(t *testing.T) {
		t.Parallel()
		a, b := newMerchant(t, true), newMerchant(t, true)
		s := csCreate(t, a.Test, sessionBody())
		g, err := b.Test.RetrieveCheckoutSessionWithResponse(context.Background(), s.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, g, g.HTTPResponse, g.Body, 404, "not_found", "session_not_found", "id")
		x := csExpire(t, b.Test, s.Id)
		wantErr(t, x, x.HTTPResponse, x.Body, 404, "not_found", "session_not_found", "id")
		// Also once it is expired (a 422 would reveal that it exists).
		if r := csExpire(t, a.Test, s.Id); r.StatusCode() != 200 {
			t.Fatalf("owner expire: %d %s", r.StatusCode(), r.Body)
		}
		x = csExpire(t, b.Test, s.Id)
		wantErr(t, x, x.HTTPResponse, x.Body, 404, "not_found", "session_not_found", "id")
		if got := csGet(t, a.Test, s.Id); got.Status != "expired" {
			t.Fatalf("status = %s", got.Status)
		}
		if ids, _ := csListIDs(t, b.Test, api.ListCheckoutSessionsParams{}); len(ids) != 0 {
			t.Fatalf("merchant B lists %v", ids)
		}
	})

	harness.Rule(t, "ISO", "the live key of the same merchant gets 404 for its test session", func(t *testing.T) {
		t.Parallel()
		m := newMerchant(t, true)
		s := csCreate(t, m.Test, sessionBody())
		g, err := m.Live.RetrieveCheckoutSessionWithResponse(context.Background(), s.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, g, g.HTTPResponse, g.Body, 404, "not_found", "session_not_found", "id")
		x := csExpire(t, m.Live, s.Id)
		wantErr(t, x, x.HTTPResponse, x.Body, 404, "not_found", "session_not_found", "id")
		if ids, _ := csListIDs(t, m.Live, api.ListCheckoutSessionsParams{}); len(ids) != 0 {
			t.Fatalf("live key lists %v", ids)
		}
		if got := csGet(t, m.Test, s.Id); got.Status != "open" {
			t.Fatalf("status after foreign expire = %s, want open", got.Status)
		}
		// And the other way round.
		l := csCreate(t, m.Live, sessionBody())
		g, err = m.Test.RetrieveCheckoutSessionWithResponse(context.Background(), l.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, g, g.HTTPResponse, g.Body, 404, "not_found", "session_not_found", "id")
	})
}
