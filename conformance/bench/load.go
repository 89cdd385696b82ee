package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// op performs one request (or one floor transaction). A non-nil error counts the request as
// failed (non-2xx, transport error, wrong answer); its latency is still recorded.
type op func(ctx context.Context) error

// scenario is one measured workload: newOp gives every worker its own op (and with it its own
// keep-alive connection or its own state).
type scenario struct {
	name  string
	floor string // name of the floor it is compared with ("" = none: it is a floor)
	newOp func(worker int) op
	// before and after (optional) bracket the run, e.g. to hold database connections only
	// while a floor runs.
	before func(context.Context) error
	after  func()
	// settle (optional) runs between the warm-up and the measured run: ANALYZE (-analyze), so
	// that the statistics know the rows the scenario's own merchant just created.
	settle func(context.Context) error
	// conns (optional) replaces -conns for this scenario and the floor windows interleaved
	// with it (a request whose cost is its own, measured without a queue in front of it).
	conns int
}

// result is what one measured run produced.
type result struct {
	name     string
	requests int
	errors   int
	firstErr string
	elapsed  time.Duration
	lat      []time.Duration // sorted
	capped   bool            // the hard request cap ended the run before the deadline
}

func (r result) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// quantile returns the q-quantile (0..1) of the sorted latencies (nearest rank).
func (r result) quantile(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(q*float64(len(r.lat))+0.5) - 1
	i = max(0, min(i, len(r.lat)-1))
	return r.lat[i]
}

// loadConfig bounds a run in time and in requests.
type loadConfig struct {
	conns    int
	duration time.Duration
	warmup   time.Duration
	maxReqs  int64 // hard cap on requests of one measured run
	rounds   int   // floor/scenario window pairs per scenario
	analyze  bool  // ANALYZE after each warm-up (reported in the header)
	cold     bool  // the write scenarios also run with cold statistics
}

// runScenario warms the workload up, then measures it: exactly conns workers, each looping
// over its op until the deadline or until the request cap is reached.
func runScenario(ctx context.Context, cfg loadConfig, sc scenario) (result, error) {
	if sc.before != nil {
		if err := sc.before(ctx); err != nil {
			return result{}, fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	if sc.after != nil {
		defer sc.after()
	}
	n := cfg.conns
	if sc.conns > 0 {
		n = sc.conns
	}
	ops := make([]op, n)
	for i := range ops {
		ops[i] = sc.newOp(i)
	}
	if cfg.warmup > 0 {
		drive(ctx, ops, cfg.warmup, cfg.maxReqs, false)
	}
	if sc.settle != nil {
		if err := sc.settle(ctx); err != nil {
			return result{}, fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	res := drive(ctx, ops, cfg.duration, cfg.maxReqs, true)
	res.name = sc.name
	return res, nil
}

type workerOut struct {
	lat      []time.Duration
	errors   int
	firstErr string
}

// drive runs ops concurrently for d (or until maxReqs requests were started).
func drive(ctx context.Context, ops []op, d time.Duration, maxReqs int64, record bool) result {
	var started atomic.Int64
	var capped atomic.Bool
	outs := make([]workerOut, len(ops))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	begin := time.Now()
	deadline := begin.Add(d)
	var wg sync.WaitGroup
	for w := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &outs[w]
			if record {
				out.lat = make([]time.Duration, 0, 4096)
			}
			for {
				now := time.Now()
				if !now.Before(deadline) || ctx.Err() != nil {
					return
				}
				if started.Add(1) > maxReqs {
					capped.Store(true)
					return
				}
				err := ops[w](ctx)
				took := time.Since(now)
				if !record {
					continue
				}
				out.lat = append(out.lat, took)
				if err != nil {
					out.errors++
					if out.firstErr == "" {
						out.firstErr = err.Error()
					}
				}
			}
		}()
	}
	wg.Wait()
	res := result{elapsed: time.Since(begin), capped: capped.Load()}
	n := 0
	for _, o := range outs {
		n += len(o.lat)
	}
	res.lat = make([]time.Duration, 0, n)
	for _, o := range outs {
		res.lat = append(res.lat, o.lat...)
		res.errors += o.errors
		if res.firstErr == "" {
			res.firstErr = o.firstErr
		}
	}
	res.requests = len(res.lat)
	slices.Sort(res.lat)
	return res
}

// statusError is a non-2xx answer.
func statusError(status int, body []byte) error {
	if len(body) > 300 {
		body = body[:300]
	}
	return fmt.Errorf("HTTP %d: %s", status, body)
}
