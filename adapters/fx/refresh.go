package fx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"time"

	"github.com/kassa-pay/kassa/ports"
)

// DefaultECBURL is the ECB's file of the last 90 days of reference rates. The 90-day file is
// preferred over the daily one: a missed refresh or a test clock set a few days back still
// finds its day.
const DefaultECBURL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml"

// maxDocument caps a downloaded rates document (the full history since 1999 is about 6 MiB).
const maxDocument = 32 << 20

// Merge parses r and, only when it is a valid ECB document, adds its days to the table in one
// step; a day present in both takes the new figures. Readers never see half a document, and a
// malformed one leaves the table as it was. Days already loaded are kept, so refreshing with
// the daily or 90-day file never loses the history an older payment's fee was priced with.
func (e *ECB) Merge(r io.Reader) error {
	fresh, err := parse(r)
	if err != nil {
		return err
	}
	for {
		old := e.table.Load()
		merged := fresh
		if old != nil {
			byDate := make(map[time.Time]day, len(old.days)+len(fresh.days))
			for _, d := range old.days {
				byDate[d.date] = d
			}
			for _, d := range fresh.days {
				byDate[d.date] = d
			}
			merged = &table{days: make([]day, 0, len(byDate))}
			for _, d := range byDate {
				merged.days = append(merged.days, d)
			}
			sort.Slice(merged.days, func(i, j int) bool { return merged.days[i].date.Before(merged.days[j].date) })
		}
		if e.table.CompareAndSwap(old, merged) {
			return nil
		}
	}
}

// Refresher keeps an ECB table current from a URL (D7: "refreshed from the ECB URL in
// production"). It fetches once at start (unless Fetched) and then every Every; a failed fetch
// is logged and retried after RetryAfter, and the table keeps its last good figures meanwhile.
type Refresher struct {
	Rates      *ECB
	URL        string
	Client     *http.Client  // default: 30 s timeout
	Every      time.Duration // default 6 h (the ECB publishes once per working day, ~16:00 CET)
	RetryAfter time.Duration // default 5 min
	// Fetched says the caller has just fetched (Fetch): Run then waits Every before its first
	// fetch instead of fetching at once.
	Fetched bool
	Log     *slog.Logger // default slog.Default()
}

// Fetch downloads the document once and merges it into the table.
func (r *Refresher) Fetch(ctx context.Context) error {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return err
	}
	client := r.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return fmt.Errorf("fx: refresh: %w", err)
	}
	req.Header.Set("Accept", "application/xml, text/xml")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("fx: refresh: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fx: refresh: %s answered %s", r.URL, resp.Status)
	}
	body := io.LimitReader(resp.Body, maxDocument+1)
	data, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("fx: refresh: %w", err)
	}
	if len(data) > maxDocument {
		return errors.New("fx: refresh: document larger than 32 MiB")
	}
	return r.Rates.Merge(bytes.NewReader(data))
}

// Run fetches now (after Every when Fetched) and then on schedule until ctx ends.
func (r *Refresher) Run(ctx context.Context) {
	every, retry, log := r.Every, r.RetryAfter, r.Log
	if every <= 0 {
		every = 6 * time.Hour
	}
	if retry <= 0 {
		retry = 5 * time.Minute
	}
	if log == nil {
		log = slog.Default()
	}
	if r.Fetched {
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	for {
		wait := every
		if err := r.Fetch(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			wait = retry
			log.Warn("fx: refreshing ECB rates failed; keeping the last good table", "url", r.URL, "error", err.Error())
		} else {
			_, last := r.Rates.Range()
			log.Info("fx: ECB rates refreshed", "latest_day", last.Format(time.DateOnly))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
