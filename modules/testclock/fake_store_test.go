package testclock

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// memWorld is the storage the fake stores of several processes share.
type memWorld struct {
	mu   sync.Mutex
	rows map[core.Scope]*memRow
	dead map[int]bool // processes killed
}

type memRow struct {
	frozen *time.Time
	to     *time.Time
	owner  int // 0: none
}

func newMemWorld() *memWorld {
	return &memWorld{rows: map[core.Scope]*memRow{}, dead: map[int]bool{}}
}

// memStore is the fake Store of process me over w.
type memStore struct {
	w  *memWorld
	me int
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{w: newMemWorld(), me: 1} }

func (m *memStore) kill() {
	m.w.mu.Lock()
	m.w.dead[m.me] = true
	m.w.mu.Unlock()
}

func (m *memStore) alive(owner int) bool { return owner != 0 && !m.w.dead[owner] }

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func (m *memStore) FrozenTime(_ context.Context, s core.Scope) (*time.Time, error) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if r := m.w.rows[s]; r != nil {
		return copyTime(r.frozen), nil
	}
	return nil, nil
}

func (m *memStore) State(_ context.Context, s core.Scope) (State, error) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	r := m.w.rows[s]
	if r == nil {
		return State{}, nil
	}
	st := State{Frozen: copyTime(r.frozen)}
	if r.to != nil {
		mine := r.owner == m.me
		st.Advancing = &Advancing{To: *r.to, Running: mine || m.alive(r.owner), Mine: mine}
	}
	return st, nil
}

func (m *memStore) Begin(_ context.Context, s core.Scope, from *time.Time, target time.Time) (bool, error) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	r := m.w.rows[s]
	if r == nil {
		m.w.rows[s] = &memRow{frozen: copyTime(from), to: &target, owner: m.me}
		return true, nil
	}
	sameFrom := (r.frozen == nil) == (from == nil) && (from == nil || r.frozen.Equal(*from))
	free := r.to == nil || (r.to.Equal(target) && (r.owner == 0 || r.owner == m.me || !m.alive(r.owner)))
	if !sameFrom || !free {
		return false, nil
	}
	r.to, r.owner = &target, m.me
	return true, nil
}

func (m *memStore) Finish(_ context.Context, s core.Scope, target time.Time) (bool, error) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	r := m.w.rows[s]
	if r == nil || r.to == nil || !r.to.Equal(target) {
		return false, nil
	}
	r.frozen, r.to, r.owner = &target, nil, 0
	return true, nil
}

func (m *memStore) Release(_ context.Context, s core.Scope, target time.Time) error {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if r := m.w.rows[s]; r != nil && r.to != nil && r.to.Equal(target) && r.owner == m.me {
		r.owner = 0
	}
	return nil
}

func (m *memStore) Pending(_ context.Context, limit int) ([]Pending, error) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	var out []Pending
	for s, r := range m.w.rows {
		if r.to != nil && (r.owner == m.me || !m.alive(r.owner)) {
			out = append(out, Pending{Scope: s, To: *r.to})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].To.Before(out[j].To) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
