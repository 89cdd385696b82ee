package billingtest

import (
	"context"
	"sort"
	"sync"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/ports"
)

// Fake is billing's repositories and store in memory: one unit of work at a time, rolled
// back when its function fails. It passes RunStore.
type Fake struct {
	mu        sync.Mutex
	customers map[string]billing.CustomerSnapshot
	methods   map[string]billing.MethodSnapshot
	events    []core.Event
	seqs      map[string]int // insertion order of methods (Postgres: seq)
}

// NewFake returns an empty fake.
func NewFake() *Fake {
	return &Fake{customers: map[string]billing.CustomerSnapshot{}, methods: map[string]billing.MethodSnapshot{}, seqs: map[string]int{}}
}

var (
	_ ports.UnitOfWorkOf[billing.Tx] = (*Fake)(nil)
	_ billing.Store                  = (*Fake)(nil)
)

// Do runs fn on the fake's state; a failing fn leaves it as it was.
func (f *Fake) Do(ctx context.Context, fn func(ctx context.Context, tx billing.Tx) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs, ms, evs := clone(f.customers), clone(f.methods), len(f.events)
	if err := fn(ports.WithinTransaction(ctx), fakeTx{f}); err != nil {
		f.customers, f.methods, f.events = cs, ms, f.events[:evs]
		return err
	}
	return nil
}

// Events are the events the committed units of work added.
func (f *Fake) Events() []core.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]core.Event(nil), f.events...)
}

func clone[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

type fakeTx struct{ f *Fake }

func (t fakeTx) Outbox() ports.Outbox                            { return fakeOutbox(t) }
func (t fakeTx) Customers() billing.CustomerRepository           { return fakeCustomers(t) }
func (t fakeTx) PaymentMethods() billing.PaymentMethodRepository { return fakeMethods(t) }

type fakeOutbox fakeTx

func (o fakeOutbox) Add(_ context.Context, evs ...core.Event) error {
	o.f.events = append(o.f.events, evs...)
	return nil
}

type fakeCustomers fakeTx

func (r fakeCustomers) FindOrInsert(_ context.Context, c *billing.Customer) (*billing.Customer, bool, error) {
	s := c.Snapshot()
	for _, old := range r.f.customers {
		if old.Scope == s.Scope && old.EmailKey == s.EmailKey {
			return billing.RehydrateCustomer(old), false, nil
		}
	}
	r.f.customers[s.ID] = s
	return billing.RehydrateCustomer(s), true, nil
}

func (r fakeCustomers) Lock(_ context.Context, scope core.Scope, id string) (*billing.Customer, error) {
	s, ok := r.f.customers[id]
	if !ok || s.Scope != scope {
		return nil, billing.ErrNotFound
	}
	return billing.RehydrateCustomer(s), nil
}

func (r fakeCustomers) Save(_ context.Context, c *billing.Customer) error {
	s := c.Snapshot()
	old, ok := r.f.customers[s.ID]
	if !ok || old.Scope != s.Scope {
		return billing.ErrNotFound
	}
	r.f.customers[s.ID] = s
	return nil
}

type fakeMethods fakeTx

func (r fakeMethods) Insert(_ context.Context, m *billing.PaymentMethod) error {
	s := m.Snapshot()
	for _, old := range r.f.methods {
		if old.Scope == s.Scope && (old.ProcessorRef == s.ProcessorRef || old.ID == s.ID) {
			return billing.ErrMethodExists
		}
	}
	r.f.methods[s.ID] = s
	r.f.seqs[s.ID] = len(r.f.seqs) + 1
	return nil
}

func (r fakeMethods) ByProcessorRef(_ context.Context, scope core.Scope, ref string) (*billing.PaymentMethod, error) {
	for _, s := range r.f.methods {
		if s.Scope == scope && s.ProcessorRef == ref {
			return billing.RehydratePaymentMethod(s), nil
		}
	}
	return nil, billing.ErrMethodNotFound
}

func (r fakeMethods) Get(_ context.Context, scope core.Scope, id string) (*billing.PaymentMethod, error) {
	return r.f.method(scope, id)
}

func (f *Fake) method(scope core.Scope, id string) (*billing.PaymentMethod, error) {
	s, ok := f.methods[id]
	if !ok || s.Scope != scope {
		return nil, billing.ErrMethodNotFound
	}
	return billing.RehydratePaymentMethod(s), nil
}

// Customer implements billing.Store.
func (f *Fake) Customer(ctx context.Context, scope core.Scope, id string) (*billing.Customer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fakeCustomers{f}.Lock(ctx, scope, id)
}

// PaymentMethod implements billing.Store.
func (f *Fake) PaymentMethod(_ context.Context, scope core.Scope, id string) (*billing.PaymentMethod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.method(scope, id)
}

// CustomerMethods implements billing.Store.
func (f *Fake) CustomerMethods(_ context.Context, scope core.Scope, customerID string) ([]*billing.PaymentMethod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ss []billing.MethodSnapshot
	for _, s := range f.methods {
		if s.Scope == scope && s.Customer == customerID {
			ss = append(ss, s)
		}
	}
	// Newest first: by creation, then by insertion (seq in Postgres).
	sort.SliceStable(ss, func(i, j int) bool {
		if !ss[i].Created.Equal(ss[j].Created) {
			return ss[i].Created.After(ss[j].Created)
		}
		return f.seqs[ss[i].ID] > f.seqs[ss[j].ID]
	})
	out := make([]*billing.PaymentMethod, 0, len(ss))
	for _, s := range ss {
		out = append(out, billing.RehydratePaymentMethod(s))
	}
	return out, nil
}
