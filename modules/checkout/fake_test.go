package checkout

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// memStore is an in-memory Store for the unit tests: one mutex plays the row locks.
type memStore struct {
	mu       sync.Mutex
	sessions []SessionSnapshot // insertion order = seq
	events   []core.Event
	payments []payments.Record
	// failPaymentInsert makes UpdateWithPayment fail after fn, as a failed insert would.
	failPaymentInsert bool
	frozen            map[string]bool // merchant ids whose test clock is frozen
}

func newMemStore() *memStore { return &memStore{frozen: map[string]bool{}} }

func (m *memStore) Insert(_ context.Context, s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions = append(m.sessions, s.Snapshot())
	return nil
}

func (m *memStore) find(scope core.Scope, id string) int {
	for i, s := range m.sessions {
		if s.ID == id && s.Scope == scope {
			return i
		}
	}
	return -1
}

func (m *memStore) Get(_ context.Context, scope core.Scope, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(scope, id)
	if i < 0 {
		return nil, core.NotFound("session", "id", id)
	}
	return RehydrateSession(m.sessions[i]), nil
}

func (m *memStore) FindByClientSecretHash(_ context.Context, hash [32]byte) (*Session, *time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.sessions {
		if sha256.Sum256([]byte(s.ClientSecret)) == hash {
			return RehydrateSession(s), nil, nil // fakeClocks reads its own time
		}
	}
	return nil, nil, core.NotFound("session", "id", "")
}

func (m *memStore) List(_ context.Context, scope core.Scope, q core.ListQuery, status Status) (core.Page[*Session], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var page core.Page[*Session]
	for i := len(m.sessions) - 1; i >= 0; i-- {
		s := m.sessions[i]
		if s.Scope != scope || (status != "" && s.Status != status) {
			continue
		}
		if len(page.Items) == q.Limit {
			page.HasMore = true
			break
		}
		page.Items = append(page.Items, RehydrateSession(s))
	}
	return page, nil
}

func (m *memStore) apply(i int, fn UpdateFunc) (*Session, error) {
	s := RehydrateSession(m.sessions[i])
	evs, err := fn(s)
	if err != nil {
		return nil, err
	}
	m.sessions[i] = s.Snapshot()
	m.events = append(m.events, evs...)
	return s, nil
}

func (m *memStore) Update(_ context.Context, scope core.Scope, id string, fn UpdateFunc) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(scope, id)
	if i < 0 {
		return nil, core.NotFound("session", "id", id)
	}
	return m.apply(i, fn)
}

func (m *memStore) UpdateWithPayment(_ context.Context, scope core.Scope, id string, fn PaymentUpdateFunc) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(scope, id)
	if i < 0 {
		return nil, core.NotFound("session", "id", id)
	}
	s := RehydrateSession(m.sessions[i])
	rec, evs, err := fn(s)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		if m.failPaymentInsert {
			return nil, errors.New("insert payment: boom")
		}
		for _, r := range m.payments {
			if *r.Payment.SessionID() == id {
				return nil, errors.New("insert payment: duplicate session")
			}
		}
		m.payments = append(m.payments, *rec)
	}
	m.sessions[i] = s.Snapshot()
	m.events = append(m.events, evs...)
	return s, nil
}

func (m *memStore) ClaimDue(_ context.Context, scope *core.Scope, until time.Time, limit int, fn UpdateFunc) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var due []int
	for i, s := range m.sessions {
		if s.Status != StatusOpen || s.ExpiresAt.After(until) {
			continue
		}
		if scope != nil && s.Scope != *scope {
			continue
		}
		if scope == nil && s.Scope.Env == core.EnvTest && m.frozen[s.Scope.MerchantID] {
			continue
		}
		due = append(due, i)
	}
	slices.SortStableFunc(due, func(a, b int) int { return m.sessions[a].ExpiresAt.Compare(m.sessions[b].ExpiresAt) })
	if len(due) > limit {
		due = due[:limit]
	}
	for _, i := range due {
		if _, err := m.apply(i, fn); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

func (m *memStore) eventCount(typ core.EventType) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, e := range m.events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// forceStatus is a test back door for states no use case reaches yet (complete, canceled).
func (m *memStore) forceStatus(id string, st Status) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.sessions {
		if m.sessions[i].ID == id {
			m.sessions[i].Status = st
		}
	}
}

// fakeClocks is a settable clock shared by every scope.
type fakeClocks struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClocks) Now(context.Context, core.Scope) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t, nil
}

func (c *fakeClocks) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// fakePrices serves a fixed set of prices.
type fakePrices map[string]*PriceInfo

func (p fakePrices) LookupPrice(_ context.Context, _ core.Scope, id string) (*PriceInfo, error) {
	if pi, ok := p[id]; ok {
		return pi, nil
	}
	return nil, core.NotFound("price", "price", id)
}
