// Package fx holds the FX-rate adapters behind ports.FXRates. ECB reads the European Central
// Bank's euro foreign exchange reference rates in their published XML format (the daily file
// eurofxref-daily.xml and the history file eurofxref-hist.xml have the same shape), from any
// io.Reader, a file path, or the bundled sample.
//
// Refreshing from the ECB URL in production is not built yet: a refresher fetches the file and
// hands the body to Reload, which swaps the whole table atomically (readers never see half a
// file, and a malformed download leaves the previous table in place).
package fx

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/xml"
	"fmt"
	"io"
	"math/big"
	"os"
	"regexp"
	"sort"
	"sync/atomic"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// sampleXML is a copy of testdata/ecb/eurofxref-hist-sample.xml (a test keeps the two
// identical). Its figures are a fixture in the ECB format, NOT published ECB data.
//
//go:embed eurofxref-hist-sample.xml
var sampleXML []byte

// ECB is a table of ECB reference rates (1 EUR = rate units of a currency, per publication
// day). It implements ports.FXRates with cross rates through EUR: from→to = rate(to) /
// rate(from), EUR→EUR = 1. It is safe for concurrent use.
type ECB struct {
	table atomic.Pointer[table]
}

var _ ports.FXRates = (*ECB)(nil)

// table is one parsed file: publication days in ascending order.
type table struct {
	days []day
}

type day struct {
	date  time.Time           // 00:00 UTC
	rates map[string]*big.Rat // currency → units per 1 EUR; never modified after parsing
}

// New parses an ECB XML document (daily or history file).
func New(r io.Reader) (*ECB, error) {
	e := &ECB{}
	if err := e.Reload(r); err != nil {
		return nil, err
	}
	return e, nil
}

// NewFromFile parses the ECB XML file at path.
func NewFromFile(path string) (*ECB, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the operator names the rates file (KASSA_FX_FILE); reading it is the point
	if err != nil {
		return nil, fmt.Errorf("fx: %w", err)
	}
	defer func() { _ = f.Close() }()
	e, err := New(f)
	if err != nil {
		return nil, fmt.Errorf("fx: %s: %w", path, err)
	}
	return e, nil
}

// NewSample returns the bundled sample table: invented figures in the ECB format for the
// working days 2026-11-12 to 2026-11-20, for tests and offline demo runs. Never price a live
// payment with it.
func NewSample() *ECB {
	e, err := New(bytes.NewReader(sampleXML))
	if err != nil {
		panic("fx: bundled sample is malformed: " + err.Error()) // guarded by a test
	}
	return e
}

// Reload parses r and, only when it is a valid ECB document, replaces the table in one step.
func (e *ECB) Reload(r io.Reader) error {
	t, err := parse(r)
	if err != nil {
		return err
	}
	e.table.Store(t)
	return nil
}

// Range returns the first and last publication days of the table.
func (e *ECB) Range() (first, last time.Time) {
	t := e.table.Load()
	if t == nil || len(t.days) == 0 {
		return time.Time{}, time.Time{}
	}
	return t.days[0].date, t.days[len(t.days)-1].date
}

// Rate implements ports.FXRates: the rate of the latest publication day on or before the UTC
// date of `at`. Both currencies must be quoted on that same day (EUR always is).
func (e *ECB) Rate(ctx context.Context, at time.Time, from, to core.Currency) (ports.Rate, error) {
	if err := ctx.Err(); err != nil {
		return ports.Rate{}, err
	}
	t := e.table.Load()
	if t == nil || len(t.days) == 0 {
		return ports.Rate{}, fmt.Errorf("%w: no rates loaded", ports.ErrFXNoRateForDay)
	}
	want := ports.DateOf(at)
	// Index of the first day after want; the one before it is the latest on or before.
	i := sort.Search(len(t.days), func(i int) bool { return t.days[i].date.After(want) })
	if i == 0 {
		return ports.Rate{}, fmt.Errorf("%w: %s is before the first rate (%s)", ports.ErrFXNoRateForDay,
			want.Format(time.DateOnly), t.days[0].date.Format(time.DateOnly))
	}
	d := t.days[i-1]
	fromRate, err := d.perEUR(from)
	if err != nil {
		return ports.Rate{}, err
	}
	toRate, err := d.perEUR(to)
	if err != nil {
		return ports.Rate{}, err
	}
	return ports.NewRate(from, to, d.date, new(big.Rat).Quo(toRate, fromRate))
}

// perEUR returns the units of c per 1 EUR on d (shared; callers must not modify it).
func (d day) perEUR(c core.Currency) (*big.Rat, error) {
	if c == "EUR" {
		return big.NewRat(1, 1), nil
	}
	r, ok := d.rates[string(c)]
	if !ok {
		return nil, fmt.Errorf("%w: %q on %s", ports.ErrFXCurrencyNotQuoted, string(c), d.date.Format(time.DateOnly))
	}
	return r, nil
}

// The XML shape shared by eurofxref-daily.xml and eurofxref-hist.xml:
//
//	<gesmes:Envelope …><Cube><Cube time="2026-11-18"><Cube currency="USD" rate="1.1625"/>…
//
// Element names are matched without namespace, as the ECB's default namespace is not a
// contract worth failing on.
type envelope struct {
	XMLName xml.Name `xml:"Envelope"`
	Outer   struct {
		Days []struct {
			Time  string `xml:"time,attr"`
			Rates []struct {
				Currency string `xml:"currency,attr"`
				Rate     string `xml:"rate,attr"`
			} `xml:"Cube"`
		} `xml:"Cube"`
	} `xml:"Cube"`
}

var (
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
	// A plain positive decimal as the ECB writes it: no sign, no exponent.
	decimalRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

func parse(r io.Reader) (*table, error) {
	var env envelope
	if err := xml.NewDecoder(r).Decode(&env); err != nil {
		return nil, fmt.Errorf("fx: not an ECB rates document: %w", err)
	}
	t := &table{}
	seen := map[time.Time]bool{}
	for _, raw := range env.Outer.Days {
		date, err := time.Parse(time.DateOnly, raw.Time)
		if err != nil {
			return nil, fmt.Errorf("fx: bad day %q", raw.Time)
		}
		if seen[date] {
			return nil, fmt.Errorf("fx: day %s appears twice", raw.Time)
		}
		seen[date] = true
		d := day{date: date, rates: make(map[string]*big.Rat, len(raw.Rates))}
		for _, q := range raw.Rates {
			if !currencyRe.MatchString(q.Currency) || q.Currency == "EUR" {
				return nil, fmt.Errorf("fx: %s: bad currency %q", raw.Time, q.Currency)
			}
			if _, dup := d.rates[q.Currency]; dup {
				return nil, fmt.Errorf("fx: %s: %s appears twice", raw.Time, q.Currency)
			}
			v, ok := new(big.Rat).SetString(q.Rate)
			if !decimalRe.MatchString(q.Rate) || !ok || v.Sign() <= 0 {
				return nil, fmt.Errorf("fx: %s: bad rate %q for %s", raw.Time, q.Rate, q.Currency)
			}
			d.rates[q.Currency] = v
		}
		t.days = append(t.days, d)
	}
	if len(t.days) == 0 {
		return nil, fmt.Errorf("fx: the document holds no rates")
	}
	// The history file lists the newest day first, the daily file has one day: sort ascending.
	sort.Slice(t.days, func(i, j int) bool { return t.days[i].date.Before(t.days[j].date) })
	return t, nil
}
