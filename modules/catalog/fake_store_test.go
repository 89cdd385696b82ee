package catalog

import (
	"context"
	"slices"
	"sync"

	"github.com/kassa-pay/kassa/core"
)

// memStore is the in-memory Store of the service's unit tests. It passes the same contract
// suite as the postgres store (catalogtest.RunStore, store_contract_test.go), so the rules the
// service tests rely on are the ones production has.
type memStore struct {
	mu       sync.Mutex             // guards everything below
	locks    map[string]*sync.Mutex // per product: UpdateProduct holds it through fn (the row lock)
	products map[string]ProductSnapshot
	prices   map[string]PriceSnapshot
	order    []string // product ids, oldest first (the seq)
	pOrder   []string // price ids, oldest first
}

func newMemStore() *memStore {
	return &memStore{locks: map[string]*sync.Mutex{}, products: map[string]ProductSnapshot{}, prices: map[string]PriceSnapshot{}}
}

// load rebuilds a product of scope with its prices, newest first; m.mu is held.
func (m *memStore) load(scope core.Scope, id string) (*Product, error) {
	r, ok := m.products[id]
	if !ok || r.Scope != scope {
		return nil, ErrNotFound
	}
	var prices []*Price
	for i := len(m.pOrder) - 1; i >= 0; i-- {
		if pr := m.prices[m.pOrder[i]]; pr.ProductID == id {
			prices = append(prices, RehydratePrice(pr))
		}
	}
	return RehydrateProduct(r, prices), nil
}

// write stores product (nil: unchanged) and prices atomically, refusing a lookup key another
// active price of the scope holds once every write is applied; m.mu is held.
func (m *memStore) write(product *ProductSnapshot, prices []PriceSnapshot) error {
	next := make(map[string]PriceSnapshot, len(m.prices)+len(prices))
	for id, r := range m.prices {
		next[id] = r
	}
	for _, r := range prices {
		next[r.ID] = r
	}
	for _, r := range prices {
		if !r.Active || r.LookupKey == "" {
			continue
		}
		for _, o := range next {
			if o.ID != r.ID && o.Active && o.LookupKey == r.LookupKey && o.Scope == r.Scope {
				return ErrLookupKeyInUse
			}
		}
	}
	for _, r := range prices {
		if _, ok := m.prices[r.ID]; !ok {
			m.pOrder = append(m.pOrder, r.ID)
		}
	}
	m.prices = next
	if product != nil {
		if _, ok := m.products[product.ID]; !ok {
			m.order = append(m.order, product.ID)
			m.locks[product.ID] = &sync.Mutex{}
		}
		m.products[product.ID] = *product
	}
	return nil
}

func (m *memStore) CreateProduct(_ context.Context, p *Product) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var prices []PriceSnapshot
	for i := len(p.prices) - 1; i >= 0; i-- {
		prices = append(prices, p.prices[i].Snapshot())
	}
	r := p.Snapshot()
	return m.write(&r, prices)
}

func (m *memStore) GetProduct(_ context.Context, scope core.Scope, id string) (*Product, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.load(scope, id)
}

func (m *memStore) UpdateProduct(_ context.Context, scope core.Scope, id string, fn func(*Product) error) (*Product, error) {
	m.mu.Lock()
	lock, ok := m.locks[id]
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	lock.Lock()
	defer lock.Unlock()
	m.mu.Lock()
	p, err := m.load(scope, id)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := fn(p); err != nil {
		return nil, err
	}
	c := p.Changes()
	var prices []PriceSnapshot
	for _, pr := range append(c.Changed, c.Added...) {
		prices = append(prices, pr.Snapshot())
	}
	var product *ProductSnapshot
	if c.Product {
		r := p.Snapshot()
		product = &r
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.write(product, prices); err != nil {
		return nil, err
	}
	return p, nil
}

func (m *memStore) GetPrice(_ context.Context, scope core.Scope, id string) (*Price, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.prices[id]
	if !ok || r.Scope != scope {
		return nil, ErrNotFound
	}
	return RehydratePrice(r), nil
}

func (m *memStore) ListProducts(_ context.Context, scope core.Scope, q core.ListQuery, active *bool) (core.Page[*Product], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var list []string
	for _, id := range m.order {
		if m.products[id].Scope == scope {
			list = append(list, id)
		}
	}
	ids, more, err := memPage(list, q, func(id string) bool { return active == nil || m.products[id].Active == *active })
	if err != nil {
		return core.Page[*Product]{}, err
	}
	out := core.Page[*Product]{Items: []*Product{}, HasMore: more}
	for _, id := range ids {
		p, err := m.load(scope, id)
		if err != nil {
			return core.Page[*Product]{}, err
		}
		out.Items = append(out.Items, p)
	}
	return out, nil
}

func (m *memStore) ListPrices(_ context.Context, scope core.Scope, productID string, q core.ListQuery, active *bool) (core.Page[*Price], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.load(scope, productID); err != nil {
		return core.Page[*Price]{}, err
	}
	var list []string
	for _, id := range m.pOrder {
		if r := m.prices[id]; r.Scope == scope && r.ProductID == productID {
			list = append(list, id)
		}
	}
	ids, more, err := memPage(list, q, func(id string) bool { return active == nil || m.prices[id].Active == *active })
	if err != nil {
		return core.Page[*Price]{}, err
	}
	out := core.Page[*Price]{Items: []*Price{}, HasMore: more}
	for _, id := range ids {
		out.Items = append(out.Items, RehydratePrice(m.prices[id]))
	}
	return out, nil
}

// memPage pages list (oldest first) newest first as the postgres pager does: a cursor must be
// in list, keep filters the listing only.
func memPage(list []string, q core.ListQuery, keep func(string) bool) ([]string, bool, error) {
	var candidates []string // in the order the page is taken
	switch {
	case q.EndingBefore != "":
		i := slices.Index(list, q.EndingBefore)
		if i < 0 {
			return nil, false, ErrUnknownCursor
		}
		candidates = list[i+1:]
	case q.StartingAfter != "":
		i := slices.Index(list, q.StartingAfter)
		if i < 0 {
			return nil, false, ErrUnknownCursor
		}
		candidates = slices.Clone(list[:i])
		slices.Reverse(candidates)
	default:
		candidates = slices.Clone(list)
		slices.Reverse(candidates)
	}
	var out []string
	for _, id := range candidates {
		if keep(id) {
			out = append(out, id)
		}
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	if q.EndingBefore != "" {
		slices.Reverse(out)
	}
	return out, more, nil
}
