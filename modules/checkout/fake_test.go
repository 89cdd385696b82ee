package checkout

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/payments/paymentstest"
	"github.com/kassa-pay/kassa/ports"
)

// memStore is an in-memory Store for the unit tests: one mutex plays the row locks. What
// payments keeps (payments, charge attempts, the outbox, the mail queue) is payments' one fake
// (paymentstest.Fake), composed into this unit of work.
type memStore struct {
	mu       sync.Mutex
	sessions []SessionSnapshot // insertion order = seq
	pay      *paymentstest.Fake
	frozen   map[string]bool // merchant ids whose test clock is frozen
	// wallClock is the charger's wall clock (newPaymentsService).
	wallClock *fakeWall
	// merchants are what FindByClientSecretHash reads of each merchant id (absent:
	// anyMerchant), as the Postgres store joins the merchant's row.
	merchants   map[string]BuyerMerchant
	anyMerchant BuyerMerchant
}

func newMemStore() *memStore {
	return &memStore{pay: paymentstest.NewFake(), frozen: map[string]bool{}, merchants: map[string]BuyerMerchant{},
		wallClock: &fakeWall{t: time.Now()}}
}

func (m *memStore) setMerchant(id string, b BuyerMerchant) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.merchants[id] = b
}

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
		return nil, ErrNotFound
	}
	return RehydrateSession(m.sessions[i]), nil
}

func (m *memStore) FindByClientSecretHash(_ context.Context, hash [32]byte) (SecretLookup, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.sessions {
		if sha256.Sum256([]byte(s.ClientSecret)) == hash {
			mer, ok := m.merchants[s.Scope.MerchantID]
			if !ok {
				mer = m.anyMerchant
			}
			// Frozen stays nil: fakeClocks reads its own time.
			return SecretLookup{Session: RehydrateSession(s), Merchant: mer}, nil
		}
	}
	return SecretLookup{}, ErrNotFound
}

// List pages the scope's sessions newest first (insertion order plays seq), as
// adapters/postgres pageBySeq does: the cursor must be a session of the scope, whatever its
// status; the status filter, as of now, narrows the listing only.
func (m *memStore) List(_ context.Context, scope core.Scope, q core.ListQuery, status Status, now time.Time) (core.Page[*Session], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var page core.Page[*Session]
	var own []SessionSnapshot // newest first
	for i := len(m.sessions) - 1; i >= 0; i-- {
		if m.sessions[i].Scope == scope {
			own = append(own, m.sessions[i])
		}
	}
	cursor, after := q.StartingAfter, true
	if q.EndingBefore != "" {
		cursor, after = q.EndingBefore, false
	}
	from, to := 0, len(own)
	if cursor != "" {
		at := slices.IndexFunc(own, func(s SessionSnapshot) bool { return s.ID == cursor })
		if at < 0 {
			return page, ErrUnknownCursor
		}
		if after {
			from = at + 1
		} else {
			to = at
		}
	}
	var match []SessionSnapshot
	for _, s := range own[from:to] {
		if status == "" || RehydrateSession(s).asOf(now).Status() == status {
			match = append(match, s)
		}
	}
	if len(match) > q.Limit {
		page.HasMore = true
		if after {
			match = match[:q.Limit]
		} else { // ending_before: the sessions just newer than the cursor
			match = match[len(match)-q.Limit:]
		}
	}
	for _, s := range match {
		page.Items = append(page.Items, RehydrateSession(s))
	}
	return page, nil
}

// memUoW is the unit of work over memStore (ports.UnitOfWorkOf[Tx]): one mutex plays every
// lock for the length of fn, and a failing fn restores everything it wrote.
type memUoW struct{ m *memStore }

var _ ports.UnitOfWorkOf[Tx] = memUoW{}

func (u memUoW) Do(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	m := u.m
	m.mu.Lock()
	defer m.mu.Unlock()
	saved := slices.Clone(m.sessions)
	err := m.pay.Hold(func(tx payments.Tx) error { return fn(ports.WithinTransaction(ctx), memTx{Tx: tx, m: m}) })
	if err != nil {
		m.sessions = saved
	}
	return err
}

// memTx is checkout.Tx over memStore and payments' fake; its methods run under the locks
// memUoW holds.
type memTx struct {
	payments.Tx
	m *memStore
}

func (t memTx) Sessions() SessionRepository { return memSessions{t.m} }

type memSessions struct{ m *memStore }

func (r memSessions) Lock(_ context.Context, scope core.Scope, id string) (*Session, error) {
	i := r.m.find(scope, id)
	if i < 0 {
		return nil, ErrNotFound
	}
	return RehydrateSession(r.m.sessions[i]), nil
}

// ClaimDue returns the due sessions in expiry order; memUoW's mutex is their lock.
func (r memSessions) ClaimDue(_ context.Context, scope *core.Scope, until time.Time, limit int) ([]*Session, error) {
	m := r.m
	var due []int
	for i, s := range m.sessions {
		if !RehydrateSession(s).IsDue(until) {
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
	out := make([]*Session, 0, len(due))
	for _, i := range due {
		out = append(out, RehydrateSession(m.sessions[i]))
	}
	return out, nil
}

// Insert adds a new session.
func (r memSessions) Insert(_ context.Context, s *Session) error {
	r.m.sessions = append(r.m.sessions, s.Snapshot())
	return nil
}

// Save writes exactly the parts s reports changed, as the Postgres repository does.
func (r memSessions) Save(_ context.Context, s *Session) error {
	i := r.m.find(s.Scope(), s.ID())
	if i < 0 {
		return ErrNotFound
	}
	snap := s.Snapshot()
	if s.Changes().Has(ChangedStatus) {
		r.m.sessions[i].Status, r.m.sessions[i].CancellationReason = snap.Status, snap.CancellationReason
	}
	if s.Changes().Has(ChangedBuyer) {
		r.m.sessions[i].Buyer = snap.Buyer
	}
	return nil
}

func (m *memStore) attempt(key string) payments.ChargeAttemptSnapshot { return m.pay.Attempt(key) }

func (m *memStore) records() []*payments.Record { return m.pay.Records() }

func (m *memStore) events() []core.Event { return m.pay.Events() }

func (m *memStore) mails() []core.Mail { return m.pay.Mail() }

func (m *memStore) eventCount(typ core.EventType) int {
	n := 0
	for _, e := range m.pay.Events() {
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

// fakeWall is a settable wall clock.
type fakeWall struct {
	mu sync.Mutex
	t  time.Time
}

func (w *fakeWall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t
}

func (w *fakeWall) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = w.t.Add(d)
}

// NextDue is the earliest expiry of the scope's sessions that ClaimDue would claim.
func (m *memStore) NextDue(_ context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var at time.Time
	found := false
	for _, snap := range m.sessions {
		s := RehydrateSession(snap)
		if snap.Scope == scope && s.IsDue(until) && (!found || s.ExpiresAt().Before(at)) {
			at, found = s.ExpiresAt(), true
		}
	}
	return at, found, nil
}
