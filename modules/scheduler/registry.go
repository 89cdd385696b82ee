// Package scheduler is the one registry of due-work processors ("process what is due at time
// T", architecture: Background work). The background loop and the sandbox test clock (D12)
// both run the processors registered here, so a module's background work is registered once
// and happens the same way whether real time or a test clock moves. cmd/kassa only registers.
package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// NextDuer is a ports.DueProcessor that can tell when its next work of a scope falls due. A
// scoped run steps through those moments so that the effects of different processors happen
// in time order (D12) rather than processor after processor.
type NextDuer interface {
	// NextDue returns the earliest due time ≤ until of the scope's pending work; ok is false
	// when nothing is due by until.
	NextDue(ctx context.Context, scope core.Scope, until time.Time) (at time.Time, ok bool, err error)
}

// Registry holds the due-work processors in registration order. It is safe for concurrent
// use; registering after runs have started is allowed (the wiring registers modules that
// themselves need the clock).
type Registry struct {
	mu    sync.RWMutex
	procs []Processor
}

// Processor is one registered processor with the name the background loop logs it under.
type Processor struct {
	Name string
	ports.DueProcessor
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds p under name. Within one moment processors run in registration order. A
// processor that also implements NextDuer has its work interleaved in time order with the
// others' during a scoped run.
func (r *Registry) Register(name string, p ports.DueProcessor) {
	if p == nil {
		panic("scheduler: nil processor " + name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.procs = append(r.procs, Processor{Name: name, DueProcessor: p})
}

// Processors returns the registered processors in registration order.
func (r *Registry) Processors() []Processor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]Processor(nil), r.procs...)
}

// DuePrecision is the precision at which storage keeps due times (PostgreSQL timestamps:
// microseconds). RunScope stops one processor this much before a due time of a processor
// registered earlier, which comes first at that moment.
const DuePrecision = time.Microsecond

// RunScope runs every processor's work of scope due up to until, in time order (D12), and
// returns when all of it is done. Each round asks every NextDuer when its next work falls
// due and lets the earliest one (registration order at a tie) run up to the next due time of
// any other (exclusive of those of processors registered before it), so the effects of
// different processors interleave in time order however many there are, in as many rounds as
// the order switches from one processor to another. A processor without NextDue cannot be
// interleaved: it is taken to have no work that depends on the scope's time (the charge
// attempt sweeper's grace is wall-clock time) and runs, in registration order, before each
// round (up to the round's earliest moment) and at the end; a processor whose work falls due
// on the scope's clock must implement NextDue. Each processor does its
// work in bounded batches, each its own unit of work; nothing here holds a connection or a
// transaction. When no NextDuer has work left, the processors without NextDue run up to until,
// and the rounds go on if they did any work (which may have made work for a NextDuer). A round that found work and did none (it is
// held by a concurrent sweep, which is committing it) waits a little and looks again. The
// first error stops the run and is returned; what already ran stays done. ctx bounds it.
func (r *Registry) RunScope(ctx context.Context, scope core.Scope, until time.Time) error {
	procs := r.Processors()
	next := make([]time.Time, len(procs))
	has := make([]bool, len(procs))
	idle, final := 0, false
	var lastAt time.Time
	lastFirst := -1
	for {
		first := -1
		for i, p := range procs {
			has[i] = false
			nd, ok := p.DueProcessor.(NextDuer)
			if !ok {
				continue
			}
			at, ok, err := nd.NextDue(ctx, scope, until)
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			if ok {
				next[i], has[i] = at, true
				if first < 0 || at.Before(next[first]) {
					first = i
				}
			}
		}
		if first < 0 {
			if final {
				return nil
			}
			n, err := runOthers(ctx, procs, scope, until)
			if err != nil || n == 0 {
				return err // nothing done: no work made for a NextDuer
			}
			final = true
			continue // the rest made work that may fall due by until
		}
		final = false
		bound := until
		for j := range procs {
			if j == first || !has[j] {
				continue
			}
			b := next[j]
			if j < first {
				b = b.Add(-DuePrecision)
			}
			if b.Before(bound) {
				bound = b
			}
		}
		if _, err := runOthers(ctx, procs, scope, next[first]); err != nil {
			return err
		}
		p := procs[first]
		n, err := p.ProcessDue(ctx, &scope, bound)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		if n == 0 && first == lastFirst && next[first].Equal(lastAt) {
			idle++
			if err := pause(ctx, idle); err != nil {
				return err
			}
		} else {
			idle = 0
		}
		lastFirst, lastAt = first, next[first]
	}
}

// runOthers runs the processors that cannot tell their due times up to until.
func runOthers(ctx context.Context, procs []Processor, scope core.Scope, until time.Time) (int, error) {
	total := 0
	for _, p := range procs {
		if _, ok := p.DueProcessor.(NextDuer); ok {
			continue
		}
		n, err := p.ProcessDue(ctx, &scope, until)
		if err != nil {
			return total, fmt.Errorf("%s: %w", p.Name, err)
		}
		total += n
	}
	return total, nil
}

// pause waits before a round is tried again that made no progress: 10 ms, doubling, at most
// 500 ms.
func pause(ctx context.Context, idle int) error {
	d := min(10*time.Millisecond<<min(idle-1, 6), 500*time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
