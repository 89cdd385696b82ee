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
	"github.com/kassa-pay/kassa/ports"
)

// memStore is an in-memory Store for the unit tests: one mutex plays the row locks.
type memStore struct {
	mu       sync.Mutex
	sessions []SessionSnapshot // insertion order = seq
	events   []core.Event
	payments []payments.Record
	attempts []memAttempt
	mail     []core.Mail
	// failPaymentInsert makes the next n payment inserts fail, as a failed insert (or a crash
	// before the commit) would: the unit of work rolls back.
	failPaymentInsert int
	frozen            map[string]bool // merchant ids whose test clock is frozen
	wallClock         core.Clock      // the attempts' started time (nil: time.Now)
	// merchants are what FindByClientSecretHash reads of each merchant id (absent:
	// anyMerchant), as the Postgres store joins the merchant's row.
	merchants   map[string]BuyerMerchant
	anyMerchant BuyerMerchant
}

// memAttempt is a charge attempt with the wall-clock time it was recorded.
type memAttempt struct {
	snap    payments.ChargeAttemptSnapshot
	started time.Time
}

func newMemStore() *memStore {
	return &memStore{frozen: map[string]bool{}, merchants: map[string]BuyerMerchant{}}
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
	saved := struct {
		sessions []SessionSnapshot
		events   []core.Event
		payments []payments.Record
		attempts []memAttempt
		mail     []core.Mail
	}{slices.Clone(m.sessions), slices.Clone(m.events), slices.Clone(m.payments), slices.Clone(m.attempts), slices.Clone(m.mail)}
	if err := fn(ports.WithinTransaction(ctx), memTx{m}); err != nil {
		m.sessions, m.events, m.payments, m.attempts, m.mail = saved.sessions, saved.events, saved.payments, saved.attempts, saved.mail
		return err
	}
	return nil
}

// memTx is checkout.Tx over memStore; its methods run under the mutex memUoW holds.
type memTx struct{ m *memStore }

func (t memTx) Sessions() SessionRepository                { return memSessions(t) }
func (t memTx) Payments() payments.PaymentRepository       { return memPayments(t) }
func (t memTx) ChargeAttempts() payments.AttemptRepository { return memAttempts(t) }
func (t memTx) Outbox() ports.Outbox                       { return memOutbox(t) }
func (t memTx) Mail() ports.MailQueue                      { return memOutbox(t) }

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

type memPayments struct{ m *memStore }

func (r memPayments) Insert(_ context.Context, rec *payments.Record) error {
	if r.m.failPaymentInsert > 0 {
		r.m.failPaymentInsert--
		return errors.New("insert payment: boom")
	}
	for _, p := range r.m.payments {
		if *p.Payment.SessionID() == *rec.Payment.SessionID() {
			return payments.ErrPaymentExists
		}
	}
	r.m.payments = append(r.m.payments, *rec)
	return nil
}

func (r memPayments) LockDue(_ context.Context, recs []*payments.Record) ([]*payments.Record, error) {
	var out []*payments.Record
	for _, want := range recs {
		for _, rec := range r.m.payments {
			if rec.Payment.ID() == want.Payment.ID() {
				cp := rec
				cp.Payment = payments.RehydratePayment(rec.Payment.Snapshot())
				out = append(out, &cp)
			}
		}
	}
	return out, nil
}

// SaveDue keeps the payment's new state; checkout's tests keep no disputes.
func (r memPayments) SaveDue(_ context.Context, rec *payments.Record, _ *payments.Dispute) error {
	for i := range r.m.payments {
		if r.m.payments[i].Payment.ID() == rec.Payment.ID() {
			r.m.payments[i] = *rec
			r.m.payments[i].Payment = payments.RehydratePayment(rec.Payment.Snapshot())
			return nil
		}
	}
	return errors.New("save due: unknown payment")
}

type memAttempts struct{ m *memStore }

func (r memAttempts) Insert(_ context.Context, a *payments.ChargeAttempt) error {
	for _, e := range r.m.attempts {
		if e.snap.Scope == a.Scope() && e.snap.Reference == a.Reference() && e.snap.Status == payments.AttemptPending {
			return payments.ErrChargeInProgress
		}
	}
	r.m.attempts = append(r.m.attempts, memAttempt{snap: a.Snapshot(), started: r.m.wall()})
	return nil
}

func (r memAttempts) find(scope core.Scope, reference, key string) int {
	for k, e := range r.m.attempts {
		if e.snap.Scope == scope && e.snap.Reference == reference && payments.AttemptKey(reference, e.snap.Number) == key {
			return k
		}
	}
	return -1
}

func (r memAttempts) Lock(_ context.Context, scope core.Scope, reference, key string) (*payments.ChargeAttempt, error) {
	j := r.find(scope, reference, key)
	if j < 0 {
		return nil, core.NotFound("charge_attempt", "idempotency_key", key)
	}
	return payments.RehydrateChargeAttempt(r.m.attempts[j].snap), nil
}

func (r memAttempts) Save(_ context.Context, a *payments.ChargeAttempt) error {
	j := r.find(a.Scope(), a.Reference(), a.IdempotencyKey())
	if j < 0 || r.m.attempts[j].snap.Status != payments.AttemptPending || a.Status() == payments.AttemptPending {
		return errors.New("save attempt: not a resolution of a pending attempt")
	}
	r.m.attempts[j].snap = a.Snapshot()
	return nil
}

type memOutbox struct{ m *memStore }

func (o memOutbox) Add(_ context.Context, evs ...core.Event) error {
	o.m.events = append(o.m.events, evs...)
	return nil
}

func (o memOutbox) Enqueue(_ context.Context, mails ...core.Mail) error {
	o.m.mail = append(o.m.mail, mails...)
	return nil
}

// Stale implements payments.AttemptStore over the attempts recorded through memTx.
func (m *memStore) Stale(_ context.Context, scope *core.Scope, before time.Time, limit int) ([]*payments.ChargeAttempt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*payments.ChargeAttempt
	for _, e := range m.attempts {
		if e.snap.Status != payments.AttemptPending || !e.started.Before(before) || (scope != nil && e.snap.Scope != *scope) {
			continue
		}
		if len(out) < limit {
			out = append(out, payments.RehydrateChargeAttempt(e.snap))
		}
	}
	return out, nil
}

func (m *memStore) attempt(key string) payments.ChargeAttemptSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.attempts {
		if payments.AttemptKey(e.snap.Reference, e.snap.Number) == key {
			return e.snap
		}
	}
	return payments.ChargeAttemptSnapshot{}
}

func (m *memStore) wall() time.Time {
	if m.wallClock != nil {
		return m.wallClock.Now()
	}
	return time.Now()
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
