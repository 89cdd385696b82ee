package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The dashboard's advance of the test clock (POST /api/v1/test/test_clock/advance) is the
// merchant API's advance: the same clock, the same rules, once per Idempotency-Key.
func TestDashboardTestClockAdvance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	harness.Rule(t, "DASH", "the dashboard advances the merchant's test clock, which then stays frozen at the target; one Idempotency-Key moves it once", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		frozen := clockFreeze(t, o.Test)
		day := int64(86400)
		key := "dash-advance-" + o.Merchant.ID
		params := &dash.AdvanceDashboardTestClockParams{IdempotencyKey: &key}
		r, err := o.Client.AdvanceDashboardTestClockWithResponse(ctx, params, dash.AdvanceDashboardTestClockJSONRequestBody{Seconds: &day})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || r.JSON200.Status != "ready" || r.JSON200.Now != frozen+day || r.JSON200.FrozenTime == nil || *r.JSON200.FrozenTime != frozen+day {
			t.Fatalf("advance: %d %s", r.StatusCode(), r.Body)
		}
		again, err := o.Client.AdvanceDashboardTestClockWithResponse(ctx, params, dash.AdvanceDashboardTestClockJSONRequestBody{Seconds: &day})
		if err != nil {
			t.Fatal(err)
		}
		if again.JSON200 == nil || again.JSON200.Now != frozen+day || again.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the same key again: %d %s", again.StatusCode(), again.Body)
		}
		if c := clockGet(t, o.Test); c.Now != frozen+day || c.FrozenTime == nil || *c.FrozenTime != frozen+day {
			t.Fatalf("the merchant API's clock after the dashboard's advance: %+v", c)
		}
		g, err := o.Client.GetDashboardTestClockWithResponse(ctx)
		if err != nil || g.JSON200 == nil || g.JSON200.Now != frozen+day {
			t.Fatalf("dashboard clock: %v %s", err, g.Body)
		}
	})

	harness.Rule(t, "DASH", "the dashboard's advance refuses a body without seconds or to (400 on seconds) and seconds out of range", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		r, err := o.Client.AdvanceDashboardTestClockWithResponse(ctx, nil, dash.AdvanceDashboardTestClockJSONRequestBody{})
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode() != 400 || !strings.Contains(string(r.Body), `"param":"seconds"`) {
			t.Fatalf("empty body: %d %s", r.StatusCode(), r.Body)
		}
		zero := int64(0)
		r, err = o.Client.AdvanceDashboardTestClockWithResponse(ctx, nil, dash.AdvanceDashboardTestClockJSONRequestBody{Seconds: &zero})
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode() != 400 || !strings.Contains(string(r.Body), `"param":"seconds"`) {
			t.Fatalf("seconds 0: %d %s", r.StatusCode(), r.Body)
		}
		if c := clockGet(t, o.Test); c.FrozenTime != nil {
			t.Fatalf("a refused advance moved the clock: %+v", c)
		}
	})
}
