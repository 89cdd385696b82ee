package paymentstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/ledger"
	"github.com/kassa-pay/kassa/modules/ledger/ledgertest"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Fake is the one in-memory payments storage: payments, charge attempts, disputes, the outbox
// and the mail queue. It is the unit of work over payments.Tx (Do), and the attempt store, the
// due store and the reader that live outside units of work. One mutex plays every row lock for
// the length of a unit of work, and a unit of work whose fn fails restores everything it wrote.
// RunTx checks it against the same contract as the Postgres repositories.
//
// A module whose Tx embeds payments.Tx (checkout) composes it into its own fake with Hold.
type Fake struct {
	mu       sync.Mutex
	payments []payments.Record
	attempts []payments.ChargeAttemptSnapshot
	disputes []*payments.Dispute
	events   []core.Event
	mail     []core.Mail
	volumes  []payments.VolumeChange
	ledger   *ledgertest.Memory
	// failInserts makes the next n payment inserts fail, as a failed statement (or a crash
	// before the commit) would: the unit of work rolls back.
	failInserts int
}

// NewFake returns an empty fake.
func NewFake() *Fake { return &Fake{ledger: ledgertest.NewMemory()} }

var (
	_ ports.UnitOfWorkOf[payments.Tx] = (*Fake)(nil)
	_ payments.AttemptStore           = (*Fake)(nil)
	_ payments.DueStore               = (*Fake)(nil)
	_ payments.Reader                 = (*Fake)(nil)
)

type state struct {
	payments []payments.Record
	attempts []payments.ChargeAttemptSnapshot
	disputes []*payments.Dispute
	events   []core.Event
	mail     []core.Mail
	volumes  []payments.VolumeChange
	ledger   ledgertest.Memory
}

func (f *Fake) save() state {
	return state{slices.Clone(f.payments), slices.Clone(f.attempts), slices.Clone(f.disputes), slices.Clone(f.events), slices.Clone(f.mail), slices.Clone(f.volumes), f.ledger.Save()}
}

func (f *Fake) restore(s state) {
	f.payments, f.attempts, f.disputes, f.events, f.mail, f.volumes = s.payments, s.attempts, s.disputes, s.events, s.mail, s.volumes
	f.ledger.Restore(s.ledger)
}

// Ledger returns the ledger the fake's units of work posted to.
func (f *Fake) Ledger() *ledgertest.Memory {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.ledger.Save()
	return &s
}

// Do runs fn in one unit of work over the fake.
func (f *Fake) Do(ctx context.Context, fn func(ctx context.Context, tx payments.Tx) error) error {
	return f.Hold(func(tx payments.Tx) error { return fn(ctx, tx) })
}

// Hold runs fn holding the fake's lock, with the fake's repositories; when fn fails, whatever
// it wrote through them is restored. A composing fake calls it inside its own unit of work.
func (f *Fake) Hold(fn func(tx payments.Tx) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	saved := f.save()
	if err := fn(fakeTx{f}); err != nil {
		f.restore(saved)
		return err
	}
	return nil
}

// FailPaymentInserts makes the next n payment inserts fail.
func (f *Fake) FailPaymentInserts(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failInserts = n
}

// Volumes returns the daily volume changes added, in order.
func (f *Fake) Volumes() []payments.VolumeChange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.volumes)
}

// Events returns the events written, in order.
func (f *Fake) Events() []core.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// Mail returns the mails queued, in order.
func (f *Fake) Mail() []core.Mail {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mail)
}

// Disputes returns the disputes opened, in order.
func (f *Fake) Disputes() []*payments.Dispute {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.disputes)
}

// Records returns copies of the stored payments, in insertion order.
func (f *Fake) Records() []*payments.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*payments.Record, len(f.payments))
	for i := range f.payments {
		out[i] = copyRecord(&f.payments[i])
	}
	return out
}

// Attempt returns the stored attempt with idempotency key key (zero when none).
func (f *Fake) Attempt(key string) payments.ChargeAttemptSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.attempts {
		if payments.AttemptKey(a.Reference, a.Number) == key {
			return a
		}
	}
	return payments.ChargeAttemptSnapshot{}
}

// Seed stores a payment as it is (tests of the sweeps).
func (f *Fake) Seed(rec *payments.Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.payments = append(f.payments, *copyRecord(rec))
}

// Mutate changes the stored payment id under the lock, as another transaction would.
func (f *Fake) Mutate(id string, change func(rec *payments.Record)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.payments {
		if f.payments[i].Payment.ID() == id {
			change(&f.payments[i])
		}
	}
}

// copyRecord is rec as storage would give it back: a copy reporting no changes.
func copyRecord(r *payments.Record) *payments.Record {
	cp := &payments.Record{Payment: payments.RehydratePayment(r.Payment.Snapshot()), ProcessorRef: r.ProcessorRef,
		PayableKey: r.PayableKey, CardExpMonth: r.CardExpMonth, CardExpYear: r.CardExpYear, SEPACountry: r.SEPACountry,
		SEPALast4: r.SEPALast4, DisputeReason: r.DisputeReason}
	if r.DisputeOpensAt != nil {
		v := *r.DisputeOpensAt
		cp.DisputeOpensAt = &v
	}
	return cp.WithDueFacts(r.Due())
}

// Pending implements payments.AttemptStore.
func (f *Fake) Pending(_ context.Context, scope core.Scope, kind payments.PayableKind, reference string) (*payments.ChargeAttempt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.attempts {
		if a.Scope == scope && a.PayableKind == kind && a.Reference == reference && a.Status == payments.AttemptPending {
			return payments.RehydrateChargeAttempt(a), nil
		}
	}
	return nil, nil
}

// Stale implements payments.AttemptStore.
func (f *Fake) Stale(_ context.Context, scope *core.Scope, before time.Time, limit int) ([]*payments.ChargeAttempt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*payments.ChargeAttempt
	for _, a := range f.attempts {
		if a.Status != payments.AttemptPending || !a.StartedAt.Before(before) || (scope != nil && a.Scope != *scope) {
			continue
		}
		if len(out) < limit {
			out = append(out, payments.RehydrateChargeAttempt(a))
		}
	}
	slices.SortStableFunc(out, func(a, b *payments.ChargeAttempt) int { return a.StartedAt().Compare(b.StartedAt()) })
	return out, nil
}

func (f *Fake) due(scope *core.Scope, until time.Time) []*payments.Record {
	var due []*payments.Record
	for i := range f.payments {
		r := &f.payments[i]
		if r.IsDue(until) && (scope == nil || r.Payment.Scope() == *scope) {
			due = append(due, copyRecord(r))
		}
	}
	slices.SortStableFunc(due, func(a, b *payments.Record) int { return a.DueAt().Compare(*b.DueAt()) })
	return due
}

// ListDue implements payments.DueStore.
func (f *Fake) ListDue(_ context.Context, scope *core.Scope, until time.Time, limit int) ([]*payments.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	due := f.due(scope, until)
	if len(due) > limit {
		due = due[:limit]
	}
	return due, nil
}

// NextDue implements payments.DueStore.
func (f *Fake) NextDue(_ context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	due := f.due(&scope, until)
	if len(due) == 0 {
		return time.Time{}, false, nil
	}
	return *due[0].DueAt(), true, nil
}

// Get implements payments.Reader.
func (f *Fake) Get(_ context.Context, scope core.Scope, id string) (*payments.Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.payments {
		if p := f.payments[i].Payment; p.Scope() == scope && p.ID() == id {
			return payments.RehydratePayment(p.Snapshot()), nil
		}
	}
	return nil, payments.ErrNotFound
}

// GetBySession implements payments.Reader.
func (f *Fake) GetBySession(_ context.Context, scope core.Scope, sessionID string) (*payments.Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.payments {
		if p := f.payments[i].Payment; p.Scope() == scope && p.SessionID() != nil && *p.SessionID() == sessionID {
			return payments.RehydratePayment(p.Snapshot()), nil
		}
	}
	return nil, payments.ErrNotFound
}

// fakeTx is payments.Tx over the fake; its methods run under the lock Hold holds.
type fakeTx struct{ f *Fake }

func (t fakeTx) Payments() payments.PaymentRepository       { return fakePayments(t) }
func (t fakeTx) ChargeAttempts() payments.AttemptRepository { return fakeAttempts(t) }
func (t fakeTx) Disputes() payments.DisputeRepository       { return fakeDisputes(t) }
func (t fakeTx) Volumes() payments.VolumeRepository         { return fakeVolumes(t) }
func (t fakeTx) Outbox() ports.Outbox                       { return fakeOutbox(t) }
func (t fakeTx) Mail() ports.MailQueue                      { return fakeOutbox(t) }
func (t fakeTx) Ledger() ledger.Repository                  { return t.f.ledger }

type fakeVolumes struct{ f *Fake }

func (r fakeVolumes) Add(_ context.Context, c payments.VolumeChange) error {
	r.f.volumes = append(r.f.volumes, c)
	return nil
}

type fakePayments struct{ f *Fake }

func (r fakePayments) Insert(_ context.Context, rec *payments.Record) error {
	f := r.f
	if f.failInserts > 0 {
		f.failInserts--
		return errors.New("paymentstest: insert payment: injected failure")
	}
	if rec == nil || rec.Payment == nil || rec.PayableKey == "" || rec.Payment.PayableKind() == "" {
		return errors.New("paymentstest: insert: the payment, its payable kind and key are required")
	}
	for i := range f.payments {
		p := f.payments[i].Payment
		if p.ID() == rec.Payment.ID() && p.Scope() == rec.Payment.Scope() {
			return fmt.Errorf("paymentstest: payment %s exists", p.ID())
		}
		if p.Scope() == rec.Payment.Scope() && p.PayableKind() == rec.Payment.PayableKind() && f.payments[i].PayableKey == rec.PayableKey {
			return fmt.Errorf("%w (%s %s)", payments.ErrPaymentExists, p.PayableKind(), rec.PayableKey)
		}
	}
	f.payments = append(f.payments, *copyRecord(rec))
	return nil
}

func (r fakePayments) InsertMany(ctx context.Context, recs []*payments.Record) error {
	kept := len(r.f.payments)
	for _, rec := range recs {
		if err := r.Insert(ctx, rec); err != nil {
			r.f.payments = r.f.payments[:kept] // all or none
			return err
		}
	}
	return nil
}

func (r fakePayments) LockDue(_ context.Context, recs []*payments.Record) ([]*payments.Record, error) {
	var out []*payments.Record
	for _, want := range recs {
		for i := range r.f.payments {
			if rec := &r.f.payments[i]; rec.Payment.ID() == want.Payment.ID() && rec.Payment.Scope() == want.Payment.Scope() {
				out = append(out, copyRecord(rec))
			}
		}
	}
	return out, nil
}

func (r fakePayments) Lock(_ context.Context, scope core.Scope, id string) (*payments.Record, error) {
	for i := range r.f.payments {
		if rec := &r.f.payments[i]; rec.Payment.ID() == id && rec.Payment.Scope() == scope {
			return copyRecord(rec), nil
		}
	}
	return nil, payments.ErrNotFound
}

// Save writes what rec reports changed, as the Postgres repository does.
func (r fakePayments) Save(_ context.Context, rec *payments.Record) error {
	ch := rec.Changes()
	if ch == 0 {
		return nil
	}
	for i := range r.f.payments {
		stored := &r.f.payments[i]
		if stored.Payment.ID() != rec.Payment.ID() || stored.Payment.Scope() != rec.Payment.Scope() {
			continue
		}
		due := stored.Due()
		if ch.Has(payments.ChangedState) {
			stored.Payment = payments.RehydratePayment(rec.Payment.Snapshot())
		}
		if ch.Has(payments.ChangedSettlesAt) {
			due.SettlesAt = rec.SettlesAt()
		}
		if ch.Has(payments.ChangedAvailableAt) {
			due.AvailableAt = rec.AvailableAt()
		}
		if ch.Has(payments.ChangedDispute) {
			due.DisputeID = rec.DisputeID()
		}
		stored.WithDueFacts(due)
		return nil
	}
	return errors.New("paymentstest: save: unknown payment")
}

type fakeDisputes struct{ f *Fake }

func (r fakeDisputes) Insert(_ context.Context, d *payments.Dispute) error {
	for _, e := range r.f.disputes {
		if e.PaymentID() == d.PaymentID() && e.Scope() == d.Scope() {
			return errors.New("paymentstest: the payment has a dispute")
		}
	}
	found := false
	for i := range r.f.payments {
		if p := r.f.payments[i].Payment; p.ID() == d.PaymentID() && p.Scope() == d.Scope() {
			found = true
		}
	}
	if !found {
		return errors.New("paymentstest: a dispute of an unknown payment")
	}
	r.f.disputes = append(r.f.disputes, d)
	return nil
}

func (r fakeDisputes) Lock(_ context.Context, scope core.Scope, id string) (*payments.Dispute, error) {
	for _, e := range r.f.disputes {
		if e.ID() == id && e.Scope() == scope {
			return payments.RestoreDispute(e.Snapshot()), nil
		}
	}
	return nil, payments.ErrNoDispute
}

func (r fakeDisputes) LockDue(_ context.Context, ds []*payments.Dispute) ([]*payments.Dispute, error) {
	var out []*payments.Dispute
	for _, d := range ds {
		for _, e := range r.f.disputes {
			if e.ID() == d.ID() && e.Scope() == d.Scope() {
				out = append(out, payments.RestoreDispute(e.Snapshot()))
			}
		}
	}
	return out, nil
}

func (r fakeDisputes) Save(_ context.Context, d *payments.Dispute) error {
	if !d.Changed() {
		return nil
	}
	for i, e := range r.f.disputes {
		if e.ID() == d.ID() && e.Scope() == d.Scope() {
			r.f.disputes[i] = payments.RestoreDispute(d.Snapshot())
			return nil
		}
	}
	return errors.New("paymentstest: save of an unknown dispute")
}

type fakeAttempts struct{ f *Fake }

func (r fakeAttempts) Insert(_ context.Context, a *payments.ChargeAttempt) error {
	s := a.Snapshot()
	if s.Status != payments.AttemptPending || s.PayableKind == "" || s.StartedAt.IsZero() {
		return errors.New("paymentstest: insert attempt: a new attempt is pending, with its payable kind and start time")
	}
	for _, e := range r.f.attempts {
		if e.Scope == s.Scope && payments.AttemptKey(e.Reference, e.Number) == a.IdempotencyKey() {
			return fmt.Errorf("paymentstest: attempt %s exists", a.IdempotencyKey())
		}
		if e.Scope == s.Scope && e.PayableKind == s.PayableKind && e.Reference == s.Reference && e.Status == payments.AttemptPending {
			return payments.ErrChargeInProgress
		}
	}
	r.f.attempts = append(r.f.attempts, s)
	return nil
}

func (r fakeAttempts) InsertMany(ctx context.Context, as []*payments.ChargeAttempt) error {
	kept := len(r.f.attempts)
	for _, a := range as {
		if err := r.Insert(ctx, a); err != nil {
			r.f.attempts = r.f.attempts[:kept] // all or none
			return err
		}
	}
	return nil
}

func (r fakeAttempts) find(scope core.Scope, reference, key string) int {
	for k, e := range r.f.attempts {
		if e.Scope == scope && e.Reference == reference && payments.AttemptKey(reference, e.Number) == key {
			return k
		}
	}
	return -1
}

func (r fakeAttempts) Lock(_ context.Context, scope core.Scope, reference, key string) (*payments.ChargeAttempt, error) {
	j := r.find(scope, reference, key)
	if j < 0 {
		return nil, payments.ErrAttemptNotFound
	}
	return payments.RehydrateChargeAttempt(r.f.attempts[j]), nil
}

func (r fakeAttempts) LockMany(_ context.Context, as []*payments.ChargeAttempt) ([]*payments.ChargeAttempt, error) {
	out := make([]*payments.ChargeAttempt, len(as))
	for i, a := range as {
		j := r.find(a.Scope(), a.Reference(), a.IdempotencyKey())
		if j < 0 {
			return nil, payments.ErrAttemptNotFound
		}
		out[i] = payments.RehydrateChargeAttempt(r.f.attempts[j])
	}
	return out, nil
}

func (r fakeAttempts) SaveMany(ctx context.Context, as []*payments.ChargeAttempt) error {
	kept := slices.Clone(r.f.attempts)
	seen := make(map[string]bool, len(as))
	for _, a := range as {
		key := string(a.Scope().Env) + " " + a.Scope().MerchantID + " " + a.IdempotencyKey()
		if seen[key] {
			r.f.attempts = kept
			return errors.New("paymentstest: save attempts: one attempt twice")
		}
		seen[key] = true
		if err := r.Save(ctx, a); err != nil {
			r.f.attempts = kept // all or none
			return err
		}
	}
	return nil
}

func (r fakeAttempts) Save(_ context.Context, a *payments.ChargeAttempt) error {
	j := r.find(a.Scope(), a.Reference(), a.IdempotencyKey())
	if j < 0 || r.f.attempts[j].Status != payments.AttemptPending || a.Status() == payments.AttemptPending || a.ResolvedAt().IsZero() {
		return errors.New("paymentstest: save attempt: not a resolution of a pending attempt")
	}
	s := r.f.attempts[j]
	s.Status, s.Outcome, s.ResolvedAt = a.Status(), a.Outcome(), a.ResolvedAt()
	r.f.attempts[j] = s
	return nil
}

type fakeOutbox struct{ f *Fake }

func (o fakeOutbox) Add(_ context.Context, evs ...core.Event) error {
	o.f.events = append(o.f.events, evs...)
	return nil
}

func (o fakeOutbox) Enqueue(_ context.Context, mails ...core.Mail) error {
	o.f.mail = append(o.f.mail, mails...)
	return nil
}
