package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/conformance/harness"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The overview's daily volume (GET /api/v1/{env}/overview/daily_volume): captured payments
// summed per currency and UTC day, the last day being today by the environment's clock.
func TestDashboardDailyVolume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	volume := func(t *testing.T, o *DashOwner, env dash.DashboardEnvironment, days *int) *dash.DailyVolume {
		t.Helper()
		r, err := o.Client.GetDailyVolumeWithResponse(ctx, env, &dash.GetDailyVolumeParams{Days: days})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil {
			t.Fatalf("daily volume: %d %s", r.StatusCode(), r.Body)
		}
		return r.JSON200
	}
	utcDate := func(unix int64) string { return time.Unix(unix, 0).UTC().Format("2006-01-02") }
	// dense checks every series has one entry per day from start_date on, with its sums.
	dense := func(t *testing.T, v *dash.DailyVolume) {
		t.Helper()
		for _, c := range v.Currencies {
			if len(c.Days) != v.Days {
				t.Fatalf("%s has %d days, want %d", c.Currency, len(c.Days), v.Days)
			}
			var sum, n int64
			for i, d := range c.Days {
				if want := v.StartDate.AddDate(0, 0, i).Format("2006-01-02"); d.Date.Format("2006-01-02") != want {
					t.Fatalf("%s day %d is %s, want %s", c.Currency, i, d.Date, want)
				}
				sum += d.Amount
				n += d.Count
			}
			if sum != c.Amount || n != c.Count {
				t.Fatalf("%s totals %d/%d, days sum to %d/%d", c.Currency, c.Amount, c.Count, sum, n)
			}
		}
		if got := v.StartDate.AddDate(0, 0, v.Days-1).Format("2006-01-02"); got != v.EndDate.Format("2006-01-02") {
			t.Fatalf("start %s + %d days is not end %s", v.StartDate, v.Days, v.EndDate)
		}
	}

	harness.Rule(t, "DASH", "the daily volume sums captured payments per currency and UTC day of the test clock, one entry per day of the last 90", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		frozen := clockFreeze(t, o.Test)
		dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		dashPay(t, o.Merchant, 1200, "eur", payCardOK)
		dashPay(t, o.Merchant, 500, "usd", payCardOK)
		v := volume(t, o, dash.DashboardEnvironmentTest, nil)
		dense(t, v)
		if v.Object != dash.DailyVolumeObjectDailyVolume || v.Environment != dash.DashboardEnvironmentTest || v.Days != 90 ||
			v.EndDate.Format("2006-01-02") != utcDate(frozen) || len(v.Currencies) != 2 {
			t.Fatalf("volume %+v", v)
		}
		eur, usd := v.Currencies[0], v.Currencies[1]
		if eur.Currency != "EUR" || eur.Amount != 3700 || eur.Count != 2 || eur.Days[89].Amount != 3700 || eur.Days[88].Amount != 0 ||
			usd.Currency != "USD" || usd.Amount != 500 || usd.Days[89].Count != 1 {
			t.Fatalf("series %+v", v.Currencies)
		}

		// Two days later by the test clock the payments are two days back, and the range moved.
		clockAdvance(t, o.Test, 2*86400)
		v = volume(t, o, dash.DashboardEnvironmentTest, nil)
		dense(t, v)
		if v.EndDate.Format("2006-01-02") != utcDate(frozen+2*86400) || v.Currencies[0].Days[87].Amount != 3700 || v.Currencies[0].Days[89].Amount != 0 {
			t.Fatalf("after the advance: end %s, %+v", v.EndDate, v.Currencies[0].Days[85:])
		}
		days := 7
		if v = volume(t, o, dash.DashboardEnvironmentTest, &days); v.Days != 7 || len(v.Currencies[0].Days) != 7 || v.Currencies[0].Days[4].Amount != 3700 {
			t.Fatalf("7 days: %+v", v)
		}
		dense(t, v)
	})

	harness.Rule(t, "DASH", "the daily volume of live mode ends today in real time and shows no test payment; another merchant sees none", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		dashPay(t, o.Merchant, 2500, "eur", payCardOK)
		before := time.Now().UTC().Format("2006-01-02")
		live := volume(t, o, dash.DashboardEnvironmentLive, nil)
		after := time.Now().UTC().Format("2006-01-02")
		if end := live.EndDate.Format("2006-01-02"); len(live.Currencies) != 0 || live.Environment != dash.DashboardEnvironmentLive || (end != before && end != after) {
			t.Fatalf("live volume %+v", live)
		}
		other := newDashOwner(t)
		if v := volume(t, other, dash.DashboardEnvironmentTest, nil); len(v.Currencies) != 0 {
			t.Fatalf("another merchant's volume shows %+v", v.Currencies)
		}
	})

	harness.Rule(t, "DASH", "the daily volume refuses days outside 1 to 366 (400 on days)", func(t *testing.T) {
		t.Parallel()
		o := newDashOwner(t)
		for _, d := range []int{0, 367} {
			r, err := o.Client.GetDailyVolumeWithResponse(ctx, dash.DashboardEnvironmentTest, &dash.GetDailyVolumeParams{Days: &d})
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode() != 400 || !strings.Contains(string(r.Body), `"param":"days"`) {
				t.Fatalf("days=%d: %d %s", d, r.StatusCode(), r.Body)
			}
		}
	})
}
