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

// maxSteps bounds the stepping of one scoped run; the rest is then done in one final pass.
const maxSteps = 10_000

// RunScope runs every processor's work of scope due up to until, in time order (D12): while
// some NextDuer has work due by until, every processor runs up to the earliest such moment
// (registration order within a moment), and finally every processor runs up to until. Work
// of processors without NextDue that falls between two moments thus runs at the later moment,
// before the work due then, which keeps the order. A moment that does not move forward (the
// work is held by a concurrent sweep) ends the stepping. The first processor error stops the
// run and is returned; what already ran stays done. It holds no database connection of its
// own between processors.
func (r *Registry) RunScope(ctx context.Context, scope core.Scope, until time.Time) error {
	procs := r.Processors()
	var last time.Time
	for step := 0; step < maxSteps; step++ {
		next, found := time.Time{}, false
		for _, p := range procs {
			nd, ok := p.DueProcessor.(NextDuer)
			if !ok {
				continue
			}
			at, ok, err := nd.NextDue(ctx, scope, until)
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			if ok && (!found || at.Before(next)) {
				next, found = at, true
			}
		}
		if !found || (step > 0 && !next.After(last)) {
			break
		}
		if err := runAll(ctx, procs, scope, next); err != nil {
			return err
		}
		last = next
	}
	return runAll(ctx, procs, scope, until)
}

func runAll(ctx context.Context, procs []Processor, scope core.Scope, until time.Time) error {
	for _, p := range procs {
		if _, err := p.ProcessDue(ctx, &scope, until); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	return nil
}
