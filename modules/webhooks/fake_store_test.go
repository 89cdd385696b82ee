package webhooks

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// fakeStore is the in-memory Store the use-case tests use. It passes the store contract suite
// (webhookstest.RunStore, store_contract_test.go), as the Postgres store does: one mutex
// stands for the row locks, so every method is one transaction.
type fakeStore struct {
	mu         sync.Mutex
	seq        int64
	endpoints  map[string]*fakeEndpoint // by scopeKey + id
	queue      []core.EventRecord       // events written and not fanned out yet, in order
	events     map[string]core.EventRecord
	deliveries map[string]*fakeDelivery // by scopeKey + id
}

type fakeEndpoint struct {
	snap EndpointSnapshot
	seq  int64
}

type fakeDelivery struct {
	d        Delivery
	seq      int64
	event    core.EventRecord // the event, kept with a test event's delivery only
	test     bool
	attempts []Attempt
}

func newFakeStore() *fakeStore {
	return &fakeStore{endpoints: map[string]*fakeEndpoint{}, events: map[string]core.EventRecord{},
		deliveries: map[string]*fakeDelivery{}}
}

var _ Store = (*fakeStore)(nil)

func scopeKey(s core.Scope) string { return s.MerchantID + "/" + string(s.Env) + "/" }

func (f *fakeStore) next() int64 { f.seq++; return f.seq }

// publish writes events to the outbox, as the outbox writer does when they commit.
func (f *fakeStore) publish(evs ...core.EventRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range evs {
		f.events[scopeKey(e.Scope)+e.ID] = e
		if s, ok := core.LookupEventType(string(e.Type)); ok && s.Channels != 0 {
			f.queue = append(f.queue, e)
		}
	}
}

// testEvents returns the events of the test deliveries, oldest first.
func (f *fakeStore) testEvents() []OutboxEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ds []*fakeDelivery
	for _, d := range f.deliveries {
		if d.test {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, func(a, b *fakeDelivery) int { return int(a.seq - b.seq) })
	out := make([]OutboxEvent, len(ds))
	for i, d := range ds {
		out[i] = d.event
	}
	return out
}

func (f *fakeStore) InsertEndpoint(_ context.Context, e *Endpoint) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, x := range f.endpoints {
		if x.snap.Scope == e.Scope() {
			n++
		}
	}
	if n >= MaxEndpoints {
		return ErrEndpointLimit
	}
	f.endpoints[scopeKey(e.Scope())+e.ID()] = &fakeEndpoint{snap: e.Snapshot(), seq: f.next()}
	return nil
}

func (f *fakeStore) GetEndpoint(_ context.Context, scope core.Scope, id string) (*Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x, ok := f.endpoints[scopeKey(scope)+id]
	if !ok {
		return nil, ErrNotFound
	}
	return RehydrateEndpoint(x.snap), nil
}

func (f *fakeStore) ListEndpoints(_ context.Context, scope core.Scope) ([]*Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var xs []*fakeEndpoint
	for _, x := range f.endpoints {
		if x.snap.Scope == scope {
			xs = append(xs, x)
		}
	}
	slices.SortFunc(xs, func(a, b *fakeEndpoint) int { return int(b.seq - a.seq) })
	out := make([]*Endpoint, len(xs))
	for i, x := range xs {
		out[i] = RehydrateEndpoint(x.snap)
	}
	return out, nil
}

func (f *fakeStore) UpdateEndpoint(_ context.Context, scope core.Scope, id string, now time.Time, fn func(*Endpoint) error) (*Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x, ok := f.endpoints[scopeKey(scope)+id]
	if !ok {
		return nil, ErrNotFound
	}
	e := RehydrateEndpoint(x.snap)
	if err := fn(e); err != nil {
		return nil, err
	}
	x.snap = e.Snapshot()
	if !e.Enabled() {
		f.disablePending(x.snap, now)
	}
	return RehydrateEndpoint(x.snap), nil
}

// disablePending ends the pending deliveries of a disabled endpoint.
func (f *fakeStore) disablePending(sn EndpointSnapshot, now time.Time) {
	for _, d := range f.deliveries {
		if d.d.Scope == sn.Scope && d.d.EndpointID == sn.ID && d.d.Status == DeliveryPending {
			at := now
			d.d.Status, d.d.NextAttemptAt, d.d.CompletedAt = DeliveryDisabled, nil, &at
		}
	}
}

func (f *fakeStore) DeleteEndpoint(_ context.Context, scope core.Scope, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.endpoints[scopeKey(scope)+id]; !ok {
		return ErrNotFound
	}
	delete(f.endpoints, scopeKey(scope)+id)
	for k, d := range f.deliveries {
		if d.d.Scope == scope && d.d.EndpointID == id {
			delete(f.deliveries, k)
		}
	}
	return nil
}

func (f *fakeStore) FanOut(_ context.Context, limit int, now time.Time, match func(*Endpoint, string) bool) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := min(limit, len(f.queue))
	taken := f.queue[:n]
	f.queue = slices.Clone(f.queue[n:])
	for _, ev := range taken {
		var eps []*fakeEndpoint
		for _, x := range f.endpoints {
			if x.snap.Scope == ev.Scope && x.snap.Status == StatusEnabled {
				eps = append(eps, x)
			}
		}
		slices.SortFunc(eps, func(a, b *fakeEndpoint) int { return int(a.seq - b.seq) })
		for _, x := range eps {
			if !match(RehydrateEndpoint(x.snap), string(ev.Type)) || f.deliveryOf(ev.Scope, x.snap.ID, ev.ID) != nil {
				continue
			}
			at := now
			d := &fakeDelivery{seq: f.next(), d: Delivery{ID: core.NewID(PrefixDelivery), Scope: ev.Scope, EndpointID: x.snap.ID,
				EventID: ev.ID, EventType: string(ev.Type), Status: DeliveryPending, NextAttemptAt: &at, Created: now}}
			f.deliveries[scopeKey(ev.Scope)+d.d.ID] = d
		}
	}
	return n, nil
}

func (f *fakeStore) deliveryOf(scope core.Scope, endpointID, eventID string) *fakeDelivery {
	for _, d := range f.deliveries {
		if d.d.Scope == scope && d.d.EndpointID == endpointID && d.d.EventID == eventID {
			return d
		}
	}
	return nil
}

// enabled reports whether the delivery's endpoint exists and is enabled.
func (f *fakeStore) enabled(d *fakeDelivery) (*fakeEndpoint, bool) {
	x, ok := f.endpoints[scopeKey(d.d.Scope)+d.d.EndpointID]
	return x, ok && x.snap.Status == StatusEnabled
}

func (f *fakeStore) ClaimDue(_ context.Context, now time.Time, lease time.Duration, limit int) ([]*Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var due []*fakeDelivery
	for _, d := range f.deliveries {
		if _, ok := f.enabled(d); ok && d.d.Status == DeliveryPending && !d.d.NextAttemptAt.After(now) {
			due = append(due, d)
		}
	}
	slices.SortFunc(due, func(a, b *fakeDelivery) int { return a.d.NextAttemptAt.Compare(*b.d.NextAttemptAt) })
	var jobs []*Job
	for _, d := range due {
		if len(jobs) == limit {
			break
		}
		ev, ok := d.event, d.test
		if !ok {
			ev, ok = f.events[scopeKey(d.d.Scope)+d.d.EventID]
		}
		if !ok {
			continue
		}
		if d.d.Attempts > 0 && d.d.LastAttemptAt != nil && !slices.ContainsFunc(d.attempts, func(a Attempt) bool { return a.Number == d.d.Attempts }) {
			d.attempts = append(d.attempts, Attempt{Number: d.d.Attempts, StartedAt: *d.d.LastAttemptAt, Outcome: Outcome{Err: InterruptedError}})
		}
		at, last := now.Add(lease), now
		d.d.Attempts++
		d.d.NextAttemptAt, d.d.LastAttemptAt = &at, &last
		x, _ := f.enabled(d)
		jobs = append(jobs, &Job{DeliveryID: d.d.ID, Attempt: d.d.Attempts, Endpoint: RehydrateEndpoint(x.snap), Event: ev})
	}
	return jobs, nil
}

func (f *fakeStore) RecordAttempt(_ context.Context, job *Job, a Attempt, now time.Time, fn func(*Endpoint) Next) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	scope := job.Event.Scope
	x, ok := f.endpoints[scopeKey(scope)+job.Endpoint.ID()]
	if !ok {
		return nil // deleted meanwhile, with its deliveries
	}
	e := RehydrateEndpoint(x.snap)
	before := e.Snapshot()
	next := fn(e)
	d, ok := f.deliveries[scopeKey(scope)+job.DeliveryID]
	if !ok {
		return nil
	}
	if i := slices.IndexFunc(d.attempts, func(o Attempt) bool { return o.Number == a.Number }); i < 0 {
		d.attempts = append(d.attempts, a)
	} else if d.attempts[i].Outcome.Err == InterruptedError {
		d.attempts[i] = a // a late outcome replaces the interrupted placeholder
	}
	slices.SortFunc(d.attempts, func(p, q Attempt) int { return p.Number - q.Number })
	if d.d.Attempts == job.Attempt && d.d.Status == DeliveryPending {
		d.d.Status, d.d.NextAttemptAt, d.d.CompletedAt = next.Status, next.NextAttemptAt, nil
		if next.Status != DeliveryPending {
			at := now
			d.d.CompletedAt = &at
		}
	}
	after := e.Snapshot()
	if after.Status != before.Status || after.DisabledReason != before.DisabledReason || !sameTime(after.FailingSince, before.FailingSince) {
		x.snap.Status, x.snap.DisabledReason, x.snap.FailingSince = after.Status, after.DisabledReason, after.FailingSince
		if !e.Enabled() {
			f.disablePending(x.snap, now)
		}
	}
	return nil
}

func sameTime(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }

func (f *fakeStore) NextDue(context.Context) (time.Time, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var at time.Time
	found := false
	for _, d := range f.deliveries {
		if _, ok := f.enabled(d); ok && d.d.Status == DeliveryPending && (!found || d.d.NextAttemptAt.Before(at)) {
			at, found = *d.d.NextAttemptAt, true
		}
	}
	return at, found, nil
}

func (f *fakeStore) ListDeliveries(_ context.Context, scope core.Scope, endpointID string, q core.ListQuery) (core.Page[*Delivery], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ds []*fakeDelivery
	for _, d := range f.deliveries {
		if d.d.Scope == scope && d.d.EndpointID == endpointID {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, func(a, b *fakeDelivery) int { return int(b.seq - a.seq) }) // newest first
	cursor := q.StartingAfter
	if q.EndingBefore != "" {
		cursor = q.EndingBefore
	}
	if cursor != "" {
		i := slices.IndexFunc(ds, func(d *fakeDelivery) bool { return d.d.ID == cursor })
		if i < 0 {
			return core.Page[*Delivery]{}, ErrUnknownCursor
		}
		if q.EndingBefore != "" {
			ds = ds[max(0, i-q.Limit):i]
			page := core.Page[*Delivery]{HasMore: i-q.Limit > 0}
			for _, d := range ds {
				c := d.d
				page.Items = append(page.Items, &c)
			}
			return page, nil
		}
		ds = ds[i+1:]
	}
	page := core.Page[*Delivery]{HasMore: len(ds) > q.Limit}
	for _, d := range ds[:min(q.Limit, len(ds))] {
		c := d.d
		page.Items = append(page.Items, &c)
	}
	return page, nil
}

func (f *fakeStore) GetDelivery(_ context.Context, scope core.Scope, id string) (*DeliveryDetail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deliveries[scopeKey(scope)+id]
	if !ok {
		return nil, ErrDeliveryNotFound
	}
	return &DeliveryDetail{Delivery: d.d, AttemptLog: slices.Clone(d.attempts)}, nil
}

func (f *fakeStore) Redeliver(_ context.Context, scope core.Scope, id string, now time.Time) (*Delivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deliveries[scopeKey(scope)+id]
	if !ok {
		return nil, ErrDeliveryNotFound
	}
	if _, enabled := f.enabled(d); !enabled {
		return nil, ErrEndpointDisabled
	}
	at := now
	d.d.Status, d.d.NextAttemptAt, d.d.CompletedAt = DeliveryPending, &at, nil
	c := d.d
	return &c, nil
}

func (f *fakeStore) InsertTestDelivery(_ context.Context, endpointID string, ev OutboxEvent, now time.Time) (*Delivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x, ok := f.endpoints[scopeKey(ev.Scope)+endpointID]
	if !ok {
		return nil, ErrNotFound
	}
	if x.snap.Status != StatusEnabled {
		return nil, ErrEndpointDisabled
	}
	at := now
	d := &fakeDelivery{seq: f.next(), event: ev, test: true, d: Delivery{ID: core.NewID(PrefixDelivery), Scope: ev.Scope,
		EndpointID: endpointID, EventID: ev.ID, EventType: string(ev.Type), Status: DeliveryPending, NextAttemptAt: &at, Created: now}}
	f.deliveries[scopeKey(ev.Scope)+d.d.ID] = d
	c := d.d
	return &c, nil
}
