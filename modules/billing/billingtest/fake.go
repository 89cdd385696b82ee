package billingtest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payments/paymentstest"
	"github.com/kassa-pay/kassa/ports"
)

// Fake is billing's repositories and store in memory: one unit of work at a time, rolled
// back when its function fails. It passes RunStore.
type Fake struct {
	mu        sync.Mutex
	customers map[string]billing.CustomerSnapshot
	methods   map[string]billing.MethodSnapshot
	pay       *paymentstest.Fake // payments' repositories, the outbox and the mail queue
	seqs      map[string]int     // insertion order of methods and subscriptions (Postgres: seq)
	subs      map[string]billing.SubscriptionSnapshot
	setups    map[string]billing.PendingSetup // by scope and subscription (setupKey)
	balance   []billing.BalanceTransaction    // the customers' balance transactions, in order
}

// NewFake returns an empty fake.
func NewFake() *Fake {
	return &Fake{pay: paymentstest.NewFake(), customers: map[string]billing.CustomerSnapshot{}, methods: map[string]billing.MethodSnapshot{}, seqs: map[string]int{}, subs: map[string]billing.SubscriptionSnapshot{},
		setups: map[string]billing.PendingSetup{}}
}

var (
	_ ports.UnitOfWorkOf[billing.Tx] = (*Fake)(nil)
	_ billing.Store                  = (*Fake)(nil)
)

// Do runs fn on the fake's state; a failing fn leaves it as it was. Payments' part is
// paymentstest's fake, held for the unit of work.
func (f *Fake) Do(ctx context.Context, fn func(ctx context.Context, tx billing.Tx) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs, ms, ss, ps, bs := clone(f.customers), clone(f.methods), clone(f.subs), clone(f.setups), f.balance[:len(f.balance):len(f.balance)]
	err := f.pay.Hold(func(ptx payments.Tx) error { return fn(ports.WithinTransaction(ctx), fakeTx{Tx: ptx, f: f}) })
	if err != nil {
		f.customers, f.methods, f.subs, f.setups, f.balance = cs, ms, ss, ps, bs
	}
	return err
}

// Events are the events the committed units of work added.
func (f *Fake) Events() []core.Event { return f.pay.Events() }

func clone[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

type fakeTx struct {
	payments.Tx
	f *Fake
}

func (t fakeTx) Customers() billing.CustomerRepository           { return fakeCustomers(t) }
func (t fakeTx) PaymentMethods() billing.PaymentMethodRepository { return fakeMethods(t) }
func (t fakeTx) Subscriptions() billing.SubscriptionRepository   { return fakeSubs(t) }
func (t fakeTx) PendingSetups() billing.PendingSetupRepository   { return fakeSetups(t) }

type fakeSetups fakeTx

func setupKey(scope core.Scope, sub string) string {
	return scope.MerchantID + "\x00" + string(scope.Env) + "\x00" + sub
}

func (r fakeSetups) Put(_ context.Context, p billing.PendingSetup) error {
	r.f.setups[setupKey(p.Scope, p.Subscription)] = p
	return nil
}

func (r fakeSetups) Lock(_ context.Context, scope core.Scope, sub string) (billing.PendingSetup, error) {
	p, ok := r.f.setups[setupKey(scope, sub)]
	if !ok {
		return billing.PendingSetup{}, billing.ErrNoPendingSetup
	}
	return p, nil
}

func (r fakeSetups) Delete(_ context.Context, scope core.Scope, sub string) error {
	delete(r.f.setups, setupKey(scope, sub))
	return nil
}

func (r fakeSetups) DeleteForInvoices(_ context.Context, refs []billing.SetupRef) error {
	for _, ref := range refs {
		if p, ok := r.f.setups[setupKey(ref.Scope, ref.Subscription)]; ok && p.Invoice == ref.Invoice {
			delete(r.f.setups, setupKey(ref.Scope, ref.Subscription))
		}
	}
	return nil
}

// PendingSetup implements billing.Store.
func (f *Fake) PendingSetup(_ context.Context, scope core.Scope, sub string) (billing.PendingSetup, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.setups[setupKey(scope, sub)]
	if !ok {
		return billing.PendingSetup{}, billing.ErrNoPendingSetup
	}
	return p, nil
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

func (r fakeCustomers) Balance(_ context.Context, scope core.Scope, id string, currency core.Currency) (int64, error) {
	return r.f.balanceOf(scope, id)[currency], nil
}

func (r fakeCustomers) AddBalanceTransaction(_ context.Context, t *billing.BalanceTransaction) error {
	r.f.balance = append(r.f.balance, *t)
	return nil
}

func (f *Fake) balanceOf(scope core.Scope, id string) map[core.Currency]int64 {
	out := map[core.Currency]int64{}
	for _, t := range f.balance {
		if t.Scope == scope && t.Customer == id {
			out[t.Currency] += t.Amount
		}
	}
	return out
}

// CustomerBalances implements billing.Store.
func (f *Fake) CustomerBalances(_ context.Context, scope core.Scope, id string) (map[core.Currency]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.balanceOf(scope, id), nil
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
	return fakeCustomers{f: f}.Lock(ctx, scope, id)
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

type fakeSubs fakeTx

func (r fakeSubs) Insert(_ context.Context, sub *billing.Subscription) error {
	s := sub.Snapshot()
	r.f.subs[s.ID] = s
	r.f.seqs[s.ID] = len(r.f.seqs) + 1
	return nil
}

// MarkRecurring is a no-op: the fake keeps no MRR history.
func (r fakeSubs) MarkRecurring(context.Context, core.Scope, time.Time) error { return nil }

func (r fakeSubs) Lock(_ context.Context, scope core.Scope, id string) (*billing.Subscription, error) {
	return r.f.sub(scope, id)
}

func (r fakeSubs) LockMany(_ context.Context, refs []billing.SubscriptionRef) ([]*billing.Subscription, error) {
	var out []*billing.Subscription
	seen := map[string]bool{}
	for _, ref := range refs {
		sub, err := r.f.sub(ref.Scope, ref.ID)
		if err != nil || seen[ref.ID] {
			continue
		}
		seen[ref.ID] = true
		out = append(out, sub)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Scope(), out[j].Scope()
		if a != b {
			return a.MerchantID < b.MerchantID || a.MerchantID == b.MerchantID && a.Env < b.Env
		}
		return out[i].ID() < out[j].ID()
	})
	return out, nil
}

func (r fakeSubs) Save(_ context.Context, sub *billing.Subscription) error {
	s := sub.Snapshot()
	if old, ok := r.f.subs[s.ID]; !ok || old.Scope != s.Scope {
		return billing.ErrSubscriptionMissing
	}
	r.f.subs[s.ID] = s
	return nil
}

// ClaimDue: the fake knows no test clocks, so with scope nil it covers every scope.
func (r fakeSubs) ClaimDue(_ context.Context, scope *core.Scope, until time.Time, limit int) ([]*billing.Subscription, error) {
	var due []*billing.Subscription
	for _, s := range r.f.subs {
		sub := billing.RehydrateSubscription(s)
		if (scope == nil || s.Scope == *scope) && sub.IsDue(until) {
			due = append(due, sub)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		a, _ := due[i].DueAt()
		b, _ := due[j].DueAt()
		if !a.Equal(b) {
			return a.Before(b)
		}
		return due[i].ID() < due[j].ID()
	})
	if len(due) > limit {
		due = due[:limit]
	}
	return due, nil
}

func (f *Fake) sub(scope core.Scope, id string) (*billing.Subscription, error) {
	s, ok := f.subs[id]
	if !ok || s.Scope != scope {
		return nil, billing.ErrSubscriptionMissing
	}
	return billing.RehydrateSubscription(s), nil
}

// Subscription implements billing.Store.
func (f *Fake) Subscription(_ context.Context, scope core.Scope, id string) (*billing.Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sub(scope, id)
}

// Subscriptions implements billing.Store: newest first, D8 cursors.
func (f *Fake) Subscriptions(_ context.Context, scope core.Scope, q core.ListQuery, flt billing.SubscriptionFilter) (core.Page[*billing.Subscription], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []billing.SubscriptionSnapshot
	for _, s := range f.subs {
		if s.Scope == scope {
			all = append(all, s)
		}
	}
	sort.Slice(all, func(i, j int) bool { return f.seqs[all[i].ID] > f.seqs[all[j].ID] })
	var cur *billing.SubscriptionSnapshot
	for _, c := range []string{q.StartingAfter, q.EndingBefore} {
		if c == "" {
			continue
		}
		s, ok := f.subs[c]
		if !ok || s.Scope != scope {
			return core.Page[*billing.Subscription]{}, billing.ErrUnknownCursor
		}
		cur = &s
	}
	match := func(s billing.SubscriptionSnapshot) bool {
		return (flt.Status == nil || s.Status == *flt.Status) && (flt.Customer == nil || s.Customer == *flt.Customer) &&
			(flt.Price == nil || s.PriceID == *flt.Price)
	}
	var items []billing.SubscriptionSnapshot
	for _, s := range all {
		if !match(s) {
			continue
		}
		switch {
		case cur != nil && q.StartingAfter != "" && f.seqs[s.ID] >= f.seqs[cur.ID]:
			continue
		case cur != nil && q.EndingBefore != "" && f.seqs[s.ID] <= f.seqs[cur.ID]:
			continue
		}
		items = append(items, s)
	}
	if q.EndingBefore != "" && len(items) > q.Limit { // the page nearest the cursor
		items = items[len(items)-q.Limit-1:]
		out := core.Page[*billing.Subscription]{HasMore: true}
		for _, s := range items[1:] {
			out.Items = append(out.Items, billing.RehydrateSubscription(s))
		}
		return out, nil
	}
	out := core.Page[*billing.Subscription]{HasMore: len(items) > q.Limit}
	if out.HasMore {
		items = items[:q.Limit]
	}
	for _, s := range items {
		out.Items = append(out.Items, billing.RehydrateSubscription(s))
	}
	return out, nil
}

// NextDue implements billing.Store.
func (f *Fake) NextDue(_ context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next time.Time
	found := false
	for _, s := range f.subs {
		at, ok := billing.RehydrateSubscription(s).DueAt()
		if s.Scope == scope && ok && !at.After(until) && (!found || at.Before(next)) {
			next, found = at, true
		}
	}
	return next, found, nil
}

// SubscriptionByPaymentIntent implements billing.Store.
func (f *Fake) SubscriptionByPaymentIntent(_ context.Context, piID string) (*billing.Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.subs {
		if s.PaymentIntent != "" && s.PaymentIntent == piID {
			return billing.RehydrateSubscription(s), nil
		}
	}
	return nil, billing.ErrSubscriptionMissing
}

func (r fakeCustomers) LockMany(_ context.Context, refs []billing.CustomerRef) ([]*billing.Customer, error) {
	var out []*billing.Customer
	seen := map[string]bool{}
	for _, ref := range refs {
		s, ok := r.f.customers[ref.ID]
		if !ok || s.Scope != ref.Scope || seen[ref.ID] {
			continue
		}
		seen[ref.ID] = true
		out = append(out, billing.RehydrateCustomer(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out, nil
}

func (r fakeCustomers) Balances(_ context.Context, keys []billing.BalanceKey) ([]int64, error) {
	out := make([]int64, len(keys))
	for i, k := range keys {
		out[i] = r.f.balanceOf(k.Scope, k.Customer)[k.Currency]
	}
	return out, nil
}

func (r fakeSubs) SaveMany(ctx context.Context, subs []*billing.Subscription) error {
	seen := map[string]bool{}
	for _, sub := range subs {
		if seen[sub.ID()] {
			return fmt.Errorf("billingtest: %s saved twice in one SaveMany", sub.ID())
		}
		seen[sub.ID()] = true
		if old, ok := r.f.subs[sub.ID()]; !ok || old.Scope != sub.Scope() {
			return billing.ErrSubscriptionMissing
		}
	}
	for _, sub := range subs {
		if err := r.Save(ctx, sub); err != nil {
			return err
		}
	}
	return nil
}

func (r fakeMethods) GetMany(_ context.Context, refs []billing.MethodRef) ([]*billing.PaymentMethod, error) {
	var out []*billing.PaymentMethod
	seen := map[string]bool{}
	for _, ref := range refs {
		if m, err := r.f.method(ref.Scope, ref.ID); err == nil && !seen[ref.ID] {
			seen[ref.ID] = true
			out = append(out, m)
		}
	}
	return out, nil
}
