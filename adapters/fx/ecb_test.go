package fx

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

const fixturePath = "../../testdata/ecb/eurofxref-hist-sample.xml"

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func TestEmbeddedSampleIsTheFixture(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sampleXML, want) {
		t.Fatal("adapters/fx/eurofxref-hist-sample.xml differs from testdata/ecb/eurofxref-hist-sample.xml: copy it over")
	}
	if !bytes.Contains(want[:600], []byte("NOT PUBLISHED DATA")) {
		t.Error("the fixture must say at the top that it is not published data")
	}
}

func TestFixtureQuotesEverySupportedCurrencyEveryDay(t *testing.T) {
	t.Parallel()
	e, err := NewFromFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	first, last := e.Range()
	if !first.Equal(date(2026, 11, 12)) || !last.Equal(date(2026, 11, 20)) {
		t.Fatalf("range %v – %v", first, last)
	}
	days := e.table.Load().days
	if len(days) != 7 {
		t.Fatalf("%d days", len(days))
	}
	for _, d := range days {
		if wd := d.date.Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("%s is a weekend day", d.date)
		}
		if len(d.rates) != len(core.SupportedCurrencies())-1 {
			t.Errorf("%s: %d currencies", d.date, len(d.rates))
		}
		for _, c := range core.SupportedCurrencies() {
			r, err := e.Rate(context.Background(), d.date, "EUR", core.Currency(c))
			if err != nil || r.Value().Sign() <= 0 || !r.Day.Equal(d.date) {
				t.Errorf("%s %s: %v %v", d.date.Format(time.DateOnly), c, r, err)
			}
		}
	}
}

// The figures modules/payments' hand-computed fee tests rely on.
func TestFixtureFiguresUsedByFeeTests(t *testing.T) {
	t.Parallel()
	e := NewSample()
	for c, v := range map[core.Currency]string{
		"USD": "1.1625", "JPY": "180.25", "GBP": "0.8765", "SEK": "10.95", "KRW": "1700.48", "ISK": "145.3",
	} {
		r, err := e.Rate(context.Background(), date(2026, 11, 18), "EUR", c)
		if err != nil || r.Value().Cmp(rat(v)) != 0 {
			t.Errorf("%s: %v %v, want %s", c, r, err, v)
		}
	}
	r, _ := e.Rate(context.Background(), date(2026, 11, 20), "EUR", "JPY")
	if r.Value().Cmp(rat("180.48")) != 0 {
		t.Errorf("JPY on the 20th: %v", r)
	}
}

func TestRateLookup(t *testing.T) {
	t.Parallel()
	e := NewSample()
	ny := time.FixedZone("EST", -5*3600)
	cases := []struct {
		name     string
		at       time.Time
		from, to core.Currency
		value    string
		day      time.Time
		err      error
	}{
		{name: "working day", at: date(2026, 11, 18).Add(15 * time.Hour), from: "EUR", to: "USD", value: "1.1625", day: date(2026, 11, 18)},
		{name: "first second of the day", at: date(2026, 11, 18), from: "EUR", to: "USD", value: "1.1625", day: date(2026, 11, 18)},
		{name: "last second of the day before", at: date(2026, 11, 18).Add(-time.Second), from: "EUR", to: "USD", value: "1.1634", day: date(2026, 11, 17)},
		{name: "Saturday uses Friday", at: date(2026, 11, 14).Add(9 * time.Hour), from: "EUR", to: "USD", value: "1.1615", day: date(2026, 11, 13)},
		{name: "Sunday uses Friday", at: date(2026, 11, 22), from: "EUR", to: "USD", value: "1.1610", day: date(2026, 11, 20)},
		{name: "after the last day uses the last", at: date(2027, 1, 5), from: "EUR", to: "USD", value: "1.1610", day: date(2026, 11, 20)},
		{name: "the UTC date decides", at: time.Date(2026, 11, 18, 23, 30, 0, 0, ny), from: "EUR", to: "USD", value: "1.1618", day: date(2026, 11, 19)},
		{name: "EUR to EUR", at: date(2026, 11, 18), from: "EUR", to: "EUR", value: "1", day: date(2026, 11, 18)},
		{name: "inverse", at: date(2026, 11, 18), from: "USD", to: "EUR", value: "10000/11625", day: date(2026, 11, 18)},
		{name: "cross via EUR", at: date(2026, 11, 18), from: "USD", to: "JPY", value: "180.25/1.1625", day: date(2026, 11, 18)},
		{name: "cross of zero-decimal currencies", at: date(2026, 11, 18), from: "JPY", to: "KRW", value: "1700.48/180.25", day: date(2026, 11, 18)},
		{name: "the first day", at: date(2026, 11, 12), from: "EUR", to: "GBP", value: "0.87554", day: date(2026, 11, 12)},
		{name: "before the first day", at: date(2026, 11, 12).Add(-time.Second), from: "EUR", to: "USD", err: ports.ErrFXNoRateForDay},
		{name: "long before", at: date(1999, 1, 4), from: "EUR", to: "EUR", err: ports.ErrFXNoRateForDay},
		{name: "unknown currency", at: date(2026, 11, 18), from: "EUR", to: "HRK", err: ports.ErrFXCurrencyNotQuoted},
		{name: "unknown source currency", at: date(2026, 11, 18), from: "RUB", to: "EUR", err: ports.ErrFXCurrencyNotQuoted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := e.Rate(context.Background(), tc.at, tc.from, tc.to)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// value is a decimal or a quotient of two decimals.
			want := rat("1")
			if num, den, ok := strings.Cut(tc.value, "/"); ok {
				want.Quo(rat(num), rat(den))
			} else {
				want = rat(tc.value)
			}
			if r.Value().Cmp(want) != 0 || !r.Day.Equal(tc.day) || r.From != tc.from || r.To != tc.to {
				t.Fatalf("got %v, want %s on %s", r, want.FloatString(10), tc.day.Format(time.DateOnly))
			}
		})
	}
}

func TestRateHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewSample().Rate(ctx, date(2026, 11, 18), "EUR", "USD"); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// The daily file (one day, double quotes, as eurofxref-daily.xml) has the same shape.
const dailyDoc = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
	<Cube>
		<Cube time="2026-11-23">
			<Cube currency="USD" rate="1.1700"/>
			<Cube currency="JPY" rate="181.02"/>
		</Cube>
	</Cube>
</gesmes:Envelope>`

func TestDailyFileAndReload(t *testing.T) {
	t.Parallel()
	e, err := New(strings.NewReader(dailyDoc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Rate(context.Background(), date(2026, 11, 24), "USD", "JPY")
	if err != nil || r.Value().Cmp(new(big.Rat).Quo(rat("181.02"), rat("1.17"))) != 0 || !r.Day.Equal(date(2026, 11, 23)) {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := e.Rate(context.Background(), date(2026, 11, 20), "EUR", "USD"); !errors.Is(err, ports.ErrFXNoRateForDay) {
		t.Fatalf("before the daily file's day: %v", err)
	}
	// A bad download leaves the table as it was.
	if err := e.Reload(strings.NewReader("<html>maintenance</html>")); err == nil {
		t.Fatal("accepted HTML")
	}
	if _, err := e.Rate(context.Background(), date(2026, 11, 24), "EUR", "USD"); err != nil {
		t.Fatalf("after a failed reload: %v", err)
	}
	if err := e.Reload(bytes.NewReader(sampleXML)); err != nil {
		t.Fatal(err)
	}
	if first, _ := e.Range(); !first.Equal(date(2026, 11, 12)) {
		t.Fatalf("after reload: %v", first)
	}
}

func TestRejectsMalformedDocuments(t *testing.T) {
	t.Parallel()
	wrap := func(days string) string {
		return `<gesmes:Envelope xmlns:gesmes="g" xmlns="e"><Cube>` + days + `</Cube></gesmes:Envelope>`
	}
	bad := map[string]string{
		"empty":              ``,
		"not XML":            `rates`,
		"other root":         `<Rates><Cube><Cube time="2026-11-18"><Cube currency="USD" rate="1.1"/></Cube></Cube></Rates>`,
		"no days":            wrap(``),
		"bad day":            wrap(`<Cube time="18.11.2026"><Cube currency="USD" rate="1.1"/></Cube>`),
		"day twice":          wrap(`<Cube time="2026-11-18"><Cube currency="USD" rate="1.1"/></Cube><Cube time="2026-11-18"><Cube currency="USD" rate="1.2"/></Cube>`),
		"currency twice":     wrap(`<Cube time="2026-11-18"><Cube currency="USD" rate="1.1"/><Cube currency="USD" rate="1.2"/></Cube>`),
		"lower-case code":    wrap(`<Cube time="2026-11-18"><Cube currency="usd" rate="1.1"/></Cube>`),
		"EUR quoted":         wrap(`<Cube time="2026-11-18"><Cube currency="EUR" rate="1"/></Cube>`),
		"zero rate":          wrap(`<Cube time="2026-11-18"><Cube currency="USD" rate="0"/></Cube>`),
		"negative rate":      wrap(`<Cube time="2026-11-18"><Cube currency="USD" rate="-1.1"/></Cube>`),
		"exponent rate":      wrap(`<Cube time="2026-11-18"><Cube currency="USD" rate="1e0"/></Cube>`),
		"fraction rate":      wrap(`<Cube time="2026-11-18"><Cube currency="USD" rate="11/10"/></Cube>`),
		"missing rate":       wrap(`<Cube time="2026-11-18"><Cube currency="USD"/></Cube>`),
		"truncated download": string(sampleXML[:len(sampleXML)/2]),
	}
	for name, doc := range bad {
		if _, err := New(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewFromFile("does-not-exist.xml"); err == nil {
		t.Error("missing file accepted")
	}
}

func TestConcurrentReadsDuringReload(t *testing.T) {
	t.Parallel()
	e := NewSample()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				if _, err := e.Rate(context.Background(), date(2026, 11, 18), "USD", "JPY"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for j := 0; j < 20; j++ {
		if err := e.Reload(bytes.NewReader(sampleXML)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

// The fee path end to end on the bundled file: a Saturday charge uses Friday's rate, and the
// KRW/JPY step-1 tie (312.5 cents) rounds up.
func TestFeesOnTheSample(t *testing.T) {
	t.Parallel()
	calc := payments.NewFeeCalculator(payments.DefaultFeeSchedule(), NewSample())
	cases := []struct {
		name     string
		in       payments.FeeInput
		service  int64
		psp      int64
		inCharge int64
		rateDay  time.Time
		rate     string
	}{
		// USD 100.00, US card on Wednesday 18th (see modules/payments TestFeeHandComputed).
		{"USD", payments.FeeInput{Amount: 10000, Currency: "USD", Method: payments.MethodCard, CardCountry: "US",
			ChargedAt: date(2026, 11, 18).Add(10 * time.Hour)}, 266, 199, 309, date(2026, 11, 18), "1.1625"},
		// JPY 564 on Saturday 21st, Friday's 1 EUR = 180.48 JPY: 56400 / 180.48 = 312.5 → 313;
		// 2.8 % = 8.764 → 9, + 25 = 34; PSP 2.2 % = 6.886 → 7, + 10 = 17;
		// 34 × 1.8048 = 61.3632 → 61.
		{"JPY on a Saturday", payments.FeeInput{Amount: 564, Currency: "JPY", Method: payments.MethodCard, CardCountry: "JP",
			ChargedAt: date(2026, 11, 21).Add(12 * time.Hour)}, 34, 17, 61, date(2026, 11, 20), "180.48"},
	}
	for _, tc := range cases {
		got, err := calc.Compute(context.Background(), tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := payments.Fee{ServiceFeeEUR: tc.service, PSPFeeEUR: tc.psp, ServiceFeeChargeCurrency: tc.inCharge,
			Currency: tc.in.Currency, RateDate: tc.rateDay, Rate: tc.rate}
		if got != want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, want)
		}
	}
}
