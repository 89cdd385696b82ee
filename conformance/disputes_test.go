package conformance

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

func init() {
	sectionTitles["D16"] = "refunds, disputes, balance, payouts"
}

const day = 86400

// disputed pays 25.00 EUR with the dispute card on a frozen clock and advances past the
// dispute: it returns the payment's session id, its payment id and the dispute as the
// dashboard shows it.
func disputed(t *testing.T, o *DashOwner) (sessionID, paymentID string, d dash.DashboardDispute) {
	t.Helper()
	clockFreeze(t, o.Test)
	s := dashPay(t, o.Merchant, 2500, "eur", payCardDispute)
	clockAdvance(t, o.Test, asyncDisputeWait)
	detail := paymentDetail(t, o, s.Payment.Id)
	if detail.Payment.Status != "disputed" || detail.Dispute == nil {
		t.Fatalf("payment %s with dispute %+v", detail.Payment.Status, detail.Dispute)
	}
	return s.Id, s.Payment.Id, *detail.Dispute
}

// evidence posts evidence for dispute id (key "": no Idempotency-Key).
func evidence(t *testing.T, o *DashOwner, env dash.DashboardEnvironment, id, text string, submit bool, key string) *dash.SubmitDisputeEvidenceResponse {
	t.Helper()
	var params *dash.SubmitDisputeEvidenceParams
	if key != "" {
		params = &dash.SubmitDisputeEvidenceParams{IdempotencyKey: &key}
	}
	r, err := o.Client.SubmitDisputeEvidenceWithResponse(context.Background(), env, id, params,
		dash.DisputeEvidence{Text: text, Submit: &submit})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// evidenceOK is evidence in test mode expecting 200.
func evidenceOK(t *testing.T, o *DashOwner, id, text string, submit bool) dash.DashboardDispute {
	t.Helper()
	r := evidence(t, o, dash.DashboardEnvironmentTest, id, text, submit, "")
	if r.JSON200 == nil {
		t.Fatalf("evidence for %s: %d %s", id, r.StatusCode(), r.Body)
	}
	return *r.JSON200
}

// getDispute reads a dispute of the test environment, expecting 200.
func getDispute(t *testing.T, o *DashOwner, id string) dash.DashboardDispute {
	t.Helper()
	r, err := o.Client.GetDisputeWithResponse(context.Background(), dash.DashboardEnvironmentTest, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("dispute %s: %d %s", id, r.StatusCode(), r.Body)
	}
	return *r.JSON200
}

// disputeEvents returns the events of type typ about dispute id, oldest first.
func disputeEvents(t *testing.T, o *DashOwner, typ, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range asyncEvents(t, o.Merchant, typ, "id", id) {
		out = append([]map[string]any{e.Data.Object}, out...)
	}
	return out
}

func TestDisputes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "D16", "a dispute opens needs_response with evidence due in 7 days, the 15.00 EUR fee, listed first with its time left", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, paymentID, d := disputed(t, o)
		if !strings.HasPrefix(d.Id, "dp_") || d.Status != "needs_response" || d.PaymentId != paymentID || d.Amount != 2500 ||
			d.Currency != "EUR" || d.EvidenceDueBy != d.Created+7*day || d.Fee != 1500 || d.FeeEur != 1500 ||
			d.FeeRate == nil || *d.FeeRate != "1" || d.PastDue || d.ClosedAt != nil || d.EvidenceSubmittedAt != nil {
			t.Fatalf("dispute %+v", d)
		}
		if d.SecondsLeft == nil || *d.SecondsLeft != 7*day {
			t.Fatalf("seconds_left %v, want %d", d.SecondsLeft, 7*day)
		}
		created := disputeEvents(t, o, "charge.dispute.created", d.Id)
		if len(created) != 1 || created[0]["status"] != "needs_response" || created[0]["fee"] != float64(1500) {
			t.Fatalf("charge.dispute.created %v", created)
		}
		// A closed dispute of the same merchant is listed after the one that needs a response.
		_, _, other := disputed(t, o)
		evidenceOK(t, o, other.Id, "tracking number 42", true)
		clockAdvance(t, o.Test, day)
		list, err := o.Client.ListDisputesWithResponse(ctx, dash.DashboardEnvironmentTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if list.JSON200 == nil || len(list.JSON200.Data) != 2 {
			t.Fatalf("list: %d %s", list.StatusCode(), list.Body)
		}
		first, second := list.JSON200.Data[0], list.JSON200.Data[1]
		if first.Id != d.Id || first.Status != "needs_response" || first.SecondsLeft == nil || second.Id != other.Id ||
			second.Status != "lost" || second.SecondsLeft != nil {
			t.Fatalf("list order: %+v", list.JSON200.Data)
		}
		// Paged one at a time: the same order, has_more until the last.
		one := 1
		p1, err := o.Client.ListDisputesWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListDisputesParams{Limit: &one})
		if err != nil || p1.JSON200 == nil || len(p1.JSON200.Data) != 1 || p1.JSON200.Data[0].Id != d.Id || !p1.JSON200.HasMore {
			t.Fatalf("first page: %v %s", err, p1.Body)
		}
		p2, err := o.Client.ListDisputesWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListDisputesParams{Limit: &one, StartingAfter: &d.Id})
		if err != nil || p2.JSON200 == nil || len(p2.JSON200.Data) != 1 || p2.JSON200.Data[0].Id != other.Id || p2.JSON200.HasMore {
			t.Fatalf("second page: %v %s", err, p2.Body)
		}
		foreign := "dp_unknown"
		bad, err := o.Client.ListDisputesWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.ListDisputesParams{StartingAfter: &foreign})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, bad, bad.HTTPResponse, bad.Body, 400, "invalid_request", "starting_after_invalid", "starting_after")
	})

	harness.Rule(t, "D16", "the dispute fee of a USD and a JPY charge is 15.00 EUR at the charge day's rate, half-up, with the rate kept", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		clockFreeze(t, o.Test)
		for _, c := range []struct {
			cur    string
			amount int64
			exp    int64 // 10^exponent / 100: minor units per EUR cent at rate 1
		}{{"usd", 10000, 1}, {"jpy", 5000, 0}} {
			s := dashPay(t, o.Merchant, c.amount, c.cur, payCardDispute)
			clockAdvance(t, o.Test, asyncDisputeWait)
			detail := paymentDetail(t, o, s.Payment.Id)
			d, fb := detail.Dispute, detail.FeeBreakdown
			if d == nil || fb == nil {
				t.Fatalf("%s: dispute %v, breakdown %v", c.cur, d, fb)
			}
			rate, ok := new(big.Rat).SetString(fb.Rate)
			if !ok {
				t.Fatalf("rate %q", fb.Rate)
			}
			// round(1500 × rate × 10^e / 100), half-up: JPY has no minor unit (e = 0).
			x := new(big.Rat).Mul(big.NewRat(1500, 1), rate)
			if c.exp == 0 {
				x.Quo(x, big.NewRat(100, 1))
			}
			x.Add(x, big.NewRat(1, 2))
			want := new(big.Int).Quo(x.Num(), x.Denom()).Int64()
			if d.Fee != want || d.FeeEur != 1500 || d.FeeRate == nil || *d.FeeRate != fb.Rate || d.Currency != strings.ToUpper(c.cur) {
				t.Fatalf("%s: fee %d at %v, want %d at %s", c.cur, d.Fee, d.FeeRate, want, fb.Rate)
			}
		}
	})

	harness.Rule(t, "D16", "evidence with winning_evidence: under_review, won one day after submission, the payment back to succeeded", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, paymentID, d := disputed(t, o)
		got := evidenceOK(t, o, d.Id, "Signed delivery receipt. winning_evidence", true)
		if got.Status != "under_review" || got.EvidenceSubmittedAt == nil || got.SecondsLeft != nil ||
			!strings.Contains(got.Evidence, "winning_evidence") {
			t.Fatalf("after submission %+v", got)
		}
		submitted := *got.EvidenceSubmittedAt
		clockAdvance(t, o.Test, day-1)
		if g := getDispute(t, o, d.Id); g.Status != "under_review" {
			t.Fatalf("one second before the decision: %s", g.Status)
		}
		clockAdvance(t, o.Test, 1)
		won := getDispute(t, o, d.Id)
		if won.Status != "won" || won.ClosedAt == nil || *won.ClosedAt != submitted+day || won.PastDue {
			t.Fatalf("after the decision %+v", won)
		}
		if p := paymentDetail(t, o, paymentID).Payment; p.Status != "succeeded" {
			t.Fatalf("payment after a won dispute: %s", p.Status)
		}
		updated := disputeEvents(t, o, "charge.dispute.updated", d.Id)
		closed := disputeEvents(t, o, "charge.dispute.closed", d.Id)
		if len(updated) != 1 || updated[0]["status"] != "under_review" || len(closed) != 1 || closed[0]["status"] != "won" {
			t.Fatalf("events: updated %v, closed %v", updated, closed)
		}
		ev := asyncOne(t, o.Merchant, "charge.dispute.closed", "id", d.Id)
		if ev.Created != submitted+day {
			t.Fatalf("charge.dispute.closed created %d, want %d", ev.Created, submitted+day)
		}
		// Won: the payment can be refunded again.
		if rf := refund(t, o, paymentID, ptr(int64(100)), ""); rf.JSON201 == nil {
			t.Fatalf("refund after a won dispute: %d %s", rf.StatusCode(), rf.Body)
		}
	})

	harness.Rule(t, "D16", "other evidence: a draft keeps needs_response, submitted it is lost one day later and the payment stays disputed", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, paymentID, d := disputed(t, o)
		draft := evidenceOK(t, o, d.Id, "draft: the customer", false)
		if draft.Status != "needs_response" || draft.EvidenceSubmittedAt != nil || draft.Evidence != "draft: the customer" {
			t.Fatalf("draft %+v", draft)
		}
		if g := getDispute(t, o, d.Id); g.Evidence != "draft: the customer" {
			t.Fatalf("draft not kept: %q", g.Evidence)
		}
		evidenceOK(t, o, d.Id, "The customer received the goods.", true)
		clockAdvance(t, o.Test, day)
		lost := getDispute(t, o, d.Id)
		if lost.Status != "lost" || lost.PastDue || lost.ClosedAt == nil {
			t.Fatalf("after the decision %+v", lost)
		}
		if p := paymentDetail(t, o, paymentID).Payment; p.Status != "disputed" {
			t.Fatalf("payment after a lost dispute: %s", p.Status)
		}
		r := refund(t, o, paymentID, nil, "")
		wantErr(t, r, r.HTTPResponse, r.Body, 422, "invalid_state", "charge_disputed", "")
		updated := disputeEvents(t, o, "charge.dispute.updated", d.Id)
		closed := disputeEvents(t, o, "charge.dispute.closed", d.Id)
		if len(updated) != 2 || updated[0]["status"] != "needs_response" || updated[1]["status"] != "under_review" ||
			len(closed) != 1 || closed[0]["status"] != "lost" {
			t.Fatalf("events: updated %v, closed %v", updated, closed)
		}
	})

	harness.Rule(t, "D16", "no evidence by evidence_due_by: lost at the deadline, past_due, and evidence is refused afterwards", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, paymentID, d := disputed(t, o)
		clockAdvance(t, o.Test, 7*day-1)
		if g := getDispute(t, o, d.Id); g.Status != "needs_response" || g.SecondsLeft == nil || *g.SecondsLeft != 1 {
			t.Fatalf("one second before the deadline %+v", g)
		}
		clockAdvance(t, o.Test, 1)
		lost := getDispute(t, o, d.Id)
		if lost.Status != "lost" || !lost.PastDue || lost.ClosedAt == nil || *lost.ClosedAt != d.EvidenceDueBy {
			t.Fatalf("after the deadline %+v", lost)
		}
		if p := paymentDetail(t, o, paymentID).Payment; p.Status != "disputed" {
			t.Fatalf("payment %s", p.Status)
		}
		closed := disputeEvents(t, o, "charge.dispute.closed", d.Id)
		if len(closed) != 1 || closed[0]["status"] != "lost" || closed[0]["past_due"] != true {
			t.Fatalf("charge.dispute.closed %v", closed)
		}
		late := evidence(t, o, dash.DashboardEnvironmentTest, d.Id, "winning_evidence", true, "")
		wantErr(t, late, late.HTTPResponse, late.Body, 422, "invalid_state", "dispute_not_accepting_evidence", "")
	})

	harness.Rule(t, "D16", "evidence validation: too long and empty submissions are 400 with param text, a second submission 422", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, _, d := disputed(t, o)
		long := evidence(t, o, dash.DashboardEnvironmentTest, d.Id, strings.Repeat("é", 20001), false, "")
		wantErr(t, long, long.HTTPResponse, long.Body, 400, "invalid_request", "evidence_too_long", "text")
		empty := evidence(t, o, dash.DashboardEnvironmentTest, d.Id, "  ", true, "")
		wantErr(t, empty, empty.HTTPResponse, empty.Body, 400, "invalid_request", "evidence_missing", "text")
		if g := evidenceOK(t, o, d.Id, strings.Repeat("é", 20000), false); g.Status != "needs_response" {
			t.Fatalf("20000 characters: %+v", g.Status)
		}
		evidenceOK(t, o, d.Id, "receipt", true)
		again := evidence(t, o, dash.DashboardEnvironmentTest, d.Id, "more", true, "")
		wantErr(t, again, again.HTTPResponse, again.Body, 422, "invalid_state", "dispute_not_accepting_evidence", "")
	})

	harness.Rule(t, "D16", "a dispute of another merchant or of the other environment is 404 dispute_not_found", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, _, d := disputed(t, o)
		stranger := newDashOwner(t)
		r, err := stranger.Client.GetDisputeWithResponse(ctx, dash.DashboardEnvironmentTest, d.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, r, r.HTTPResponse, r.Body, 404, "not_found", "dispute_not_found", "id")
		post := evidence(t, stranger, dash.DashboardEnvironmentTest, d.Id, "winning_evidence", true, "")
		wantErr(t, post, post.HTTPResponse, post.Body, 404, "not_found", "dispute_not_found", "id")
		live, err := o.Client.GetDisputeWithResponse(ctx, dash.DashboardEnvironmentLive, d.Id)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, live, live.HTTPResponse, live.Body, 404, "not_found", "dispute_not_found", "id")
		livePost := evidence(t, o, dash.DashboardEnvironmentLive, d.Id, "winning_evidence", true, "")
		wantErr(t, livePost, livePost.HTTPResponse, livePost.Body, 404, "not_found", "dispute_not_found", "id")
		list, err := stranger.Client.ListDisputesWithResponse(ctx, dash.DashboardEnvironmentTest, nil)
		if err != nil || list.JSON200 == nil || len(list.JSON200.Data) != 0 {
			t.Fatalf("stranger's list: %v %s", err, list.Body)
		}
		liveList, err := o.Client.ListDisputesWithResponse(ctx, dash.DashboardEnvironmentLive, nil)
		if err != nil || liveList.JSON200 == nil || len(liveList.JSON200.Data) != 0 {
			t.Fatalf("live list: %v %s", err, liveList.Body)
		}
		if g := getDispute(t, o, d.Id); g.Status != "needs_response" || g.Evidence != "" {
			t.Fatalf("changed by others: %+v", g)
		}
	})

	harness.Rule(t, "D16", "evidence with an Idempotency-Key: the retry replays the answer and saves once", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		_, _, d := disputed(t, o)
		first := evidence(t, o, dash.DashboardEnvironmentTest, d.Id, "receipt", true, "ev-"+d.Id)
		second := evidence(t, o, dash.DashboardEnvironmentTest, d.Id, "receipt", true, "ev-"+d.Id)
		if first.JSON200 == nil || second.JSON200 == nil || string(first.Body) != string(second.Body) ||
			second.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d %s, second %d %s", first.StatusCode(), first.Body, second.StatusCode(), second.Body)
		}
		if n := len(disputeEvents(t, o, "charge.dispute.updated", d.Id)); n != 1 {
			t.Fatalf("%d charge.dispute.updated events, want 1", n)
		}
		other := evidence(t, o, dash.DashboardEnvironmentTest, d.Id, "other text", true, "ev-"+d.Id)
		wantErr(t, other, other.HTTPResponse, other.Body, 409, "idempotency_error", "idempotency_key_reused", "")
	})

	harness.Rule(t, "D16", "the overview counts a disputed payment apart from the succeeded ones", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		disputed(t, o)
		dashPay(t, o.Merchant, 1000, "eur", payCardOK)
		r, err := o.Client.GetOverviewWithResponse(ctx, dash.DashboardEnvironmentTest)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("overview: %v %s", err, r.Body)
		}
		p := r.JSON200.Payments
		if p.Count != 2 || p.SucceededCount != 1 || p.DisputedCount != 1 || len(p.Gross) != 1 || p.Gross[0].Amount != 1000 ||
			len(p.Disputed) != 1 || p.Disputed[0].Amount != 2500 || p.Disputed[0].Currency != "EUR" {
			t.Fatalf("overview payments %+v", p)
		}
	})

	harness.Rule(t, "D16", "an endpoint subscribed to every event receives charge.dispute.created, updated and closed", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		rc := newHookReceiver(t, nil)
		hookEndpoint(t, o, dash.DashboardEnvironmentTest, rc.URL)
		_, _, d := disputed(t, o)
		evidenceOK(t, o, d.Id, "winning_evidence", true)
		clockAdvance(t, o.Test, day)
		hits := rc.waitFor(t, 3, 30*time.Second, aboutObject(t, d.Id))
		var types []string
		for _, h := range hits {
			e := h.envelope(t)
			types = append(types, e.Type)
			var obj struct {
				Object string `json:"object"`
			}
			if err := json.Unmarshal(e.Data.Object, &obj); err != nil || obj.Object != "dispute" {
				t.Fatalf("%s data.object %s", e.Type, e.Data.Object)
			}
		}
		for _, want := range []string{"charge.dispute.created", "charge.dispute.updated", "charge.dispute.closed"} {
			found := false
			for _, typ := range types {
				found = found || typ == want
			}
			if !found {
				t.Fatalf("delivered %v, missing %s", types, want)
			}
		}
		// The form's list is the merchant catalog: it offers the dispute events.
		et, err := o.Client.ListEventTypesWithResponse(ctx)
		if err != nil || et.JSON200 == nil {
			t.Fatalf("event types: %v", err)
		}
		if !strings.Contains(strings.Join(et.JSON200.Data, ","), "charge.dispute.created,charge.dispute.updated,charge.dispute.closed") {
			t.Fatalf("event types %v", et.JSON200.Data)
		}
	})
}
