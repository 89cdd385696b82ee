package scheduler

import (
	"context"
	"log/slog"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Periodic is housekeeping that is not due work of a scope (purges): it runs at most once per
// Every, from the background loop only.
type Periodic struct {
	Name  string
	Every time.Duration
	// Run does the work as of now and returns how many rows it touched.
	Run func(ctx context.Context, now time.Time) (int64, error)
}

// Loop is the background scheduler: every Interval it runs every registered processor over
// all scopes up to the wall-clock time (live, and test scopes whose clock is not frozen; a
// frozen clock moves only by its advances), then the periodic jobs whose time has come. Every
// process may run one; processors claim their rows with FOR UPDATE SKIP LOCKED.
type Loop struct {
	Registry *Registry
	Periodic []Periodic
	Interval time.Duration
	Log      *slog.Logger
	// Now is the wall clock (core.SystemClock when nil: whole seconds, as every due time is).
	Now func() time.Time
}

// Run runs the loop until ctx ends. A failing processor or job is logged and the loop goes
// on; the work is tried again on the next round.
func (l *Loop) Run(ctx context.Context) {
	now := l.Now
	if now == nil {
		now = core.SystemClock{}.Now
	}
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(l.Interval)
	defer t.Stop()
	last := make([]time.Time, len(l.Periodic))
	for {
		l.round(ctx, log, now(), last)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// round is one pass: every processor once up to at, then the periodic jobs that are due.
func (l *Loop) round(ctx context.Context, log *slog.Logger, at time.Time, last []time.Time) {
	for _, p := range l.Registry.Processors() {
		n, err := p.ProcessDue(ctx, nil, at)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("scheduler: "+p.Name, "error", err.Error(), "count", n)
		case n > 0:
			log.Info("scheduler: "+p.Name, "count", n)
		}
	}
	for i, job := range l.Periodic {
		if !last[i].IsZero() && at.Sub(last[i]) < job.Every { //nolint:gosec // G602: last has one entry per job (Run makes it len(l.Periodic))
			continue
		}
		n, err := job.Run(ctx, at)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				log.Error("scheduler: "+job.Name, "error", err.Error())
			}
			continue
		case n > 0:
			log.Info("scheduler: "+job.Name, "count", n)
		}
		last[i] = at //nolint:gosec // G602: as above
	}
}
