package payments

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// ManyWorkers is how many of ChargeMany's charges begin and call the processor at once.
const ManyWorkers = 8

// ManyApplied is how many outcomes one unit of work of ChargeMany applies at most: enough
// that the merchant's balances are locked once for many charges and payments' writes are
// made for many at once (applyBatch), few enough that the unit of work stays short. It is
// the renewal sweep's batch (100), so a batch of renewals that all answer is applied in one
// unit of work of about 19 multi-row statements (docs/performance.md: 20 → 100 took the
// N = 100,000 renewal run from 115–117 s to 91–103 s).
const ManyApplied = 100

// ChargeResult is the answer of one request of ChargeMany: what Charge would have answered.
type ChargeResult struct {
	Charged *Charged
	Err     error
}

// ChargeMany runs the charge protocol for reqs of one payable kind (the sweeps' off-session
// charges; a request of another kind, or a customer's answer, is made by Charge alone), with
// the same guarantees as Charge for each, and answers each in the order of reqs:
//
//  1. The charges begin together (beginMany, one unit of work of the owner: the payables
//     locked in id order, checked and marked by their owner, with one call for the batch
//     when it is a PayableBatchOwner, their attempts recorded with one insert), committed
//     before any processor call. If that unit of work fails, each charge begins on its own
//     (Charge's step 1).
//  2. Each begun charge calls the processor with no transaction open, ManyWorkers at a time.
//  3. The outcomes of the calls that answered are applied together, ManyApplied to a unit of
//     work of the owner (applyBatch), payables in id order, then their attempts (the
//     protocol's lock order: payables, attempts, payments), payments' writes made with one
//     statement each for the unit of work, the owner's side with one call for the batch
//     when it is a PayableBatchOwner, and the payments' ledger postings last, so that the
//     merchant's balances are locked once per unit of work instead of once per charge.
//  4. A unit of work that fails is applied charge by charge (Charge's step 5: each
//     attempt applied exactly once), and so is everything else Charge does after a call: a
//     failed call, a charge in flight waited for.
func (c *Charger) ChargeMany(ctx context.Context, reqs []ChargeRequest) []ChargeResult {
	out := make([]ChargeResult, len(reqs))
	var many []int // the requests that begin together
	for i, req := range reqs {
		_, err := c.kinds.of(req.Kind)
		if err == nil && (req.Answer != nil || len(reqs) == 1 || !req.Method.Valid() || req.Kind != reqs[0].Kind) {
			out[i].Charged, out[i].Err = c.Charge(ctx, req) // one charge, or an answer: Charge itself
			continue
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		many = append(many, i)
	}
	if len(many) == 0 {
		return out
	}
	k, _ := c.kinds.of(reqs[many[0]].Kind)
	begun := c.beginMany(ctx, k, reqs, many) // nil: each begins on its own
	var (
		mu    sync.Mutex
		calls []called
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, ManyWorkers)
	for j, i := range many {
		req := reqs[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var a *ChargeAttempt
			if begun != nil {
				a = begun[j]
			} else {
				var err error
				a, _, err = c.begin(ctx, k, req)
				if errors.Is(err, ErrChargeInProgress) {
					out[i].Charged, out[i].Err = c.Charge(ctx, req) // waits for the charge in flight
					return
				}
				if err != nil {
					out[i].Err = err
					return
				}
			}
			res, callErr := c.call(ctx, a, req.Source)
			if callErr != nil {
				out[i].Charged, out[i].Err = c.callFailed(ctx, k, a, nil, callErr)
				return
			}
			mu.Lock()
			calls = append(calls, called{i: i, a: a, res: res})
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(calls) == 0 {
		return out
	}
	slices.SortFunc(calls, func(x, y called) int {
		return cmp.Or(cmp.Compare(x.a.scope.MerchantID, y.a.scope.MerchantID), cmp.Compare(x.a.scope.Env, y.a.scope.Env),
			cmp.Compare(x.a.reference, y.a.reference))
	})
	for len(calls) > 0 {
		n := min(len(calls), ManyApplied)
		for j, r := range c.applyMany(ctx, k, calls[:n]) {
			out[calls[j].i] = r
		}
		calls = calls[n:]
	}
	return out
}

// beginMany is step 1 for the new charges reqs[i] of k, i in many, in one unit of work of
// k's owner: each payable locked (in scope and id order, the lock order of the protocol),
// checked and marked by the owner (BeginCharges for all of them when it is a
// PayableBatchOwner, else BeginCharge of each), and the attempts recorded with one insert.
// It answers the attempts in the order of many once the unit of work has committed, or nil
// when it failed (a payable refused or with a charge in flight, a conflict): nothing of it is
// written, and each charge then begins on its own.
func (c *Charger) beginMany(ctx context.Context, k Kind, reqs []ChargeRequest, many []int) []*ChargeAttempt {
	order := slices.Clone(many)
	slices.SortFunc(order, func(x, y int) int {
		a, b := reqs[x], reqs[y]
		return cmp.Or(cmp.Compare(a.Scope.MerchantID, b.Scope.MerchantID), cmp.Compare(a.Scope.Env, b.Scope.Env),
			cmp.Compare(a.PayableID, b.PayableID))
	})
	byReq := make(map[int]*ChargeAttempt, len(many))
	err := k.bound.do(ctx, func(ctx context.Context, tx Tx, o owner) error {
		clear(byReq) // Do may run this again
		as := make([]*ChargeAttempt, 0, len(order))
		refs := make([]PayableRef, len(order))
		for j, i := range order {
			refs[j] = PayableRef{Scope: reqs[i].Scope, ID: reqs[i].PayableID}
		}
		ps, err := o.lockMany(ctx, refs)
		if err != nil {
			return err
		}
		starts := make([]ChargeStart, len(order))
		for j, i := range order {
			req := reqs[i]
			starts[j] = ChargeStart{Kind: AttemptCharge, Method: req.Method, OffSession: req.Source.OffSession, SavedMethod: req.SavedMethod, Now: req.Now}
		}
		// Checked and marked by the owner: with one statement when it is a PayableBatchOwner.
		// A refusal (committed or not) fails the batch: each charge then begins on its own
		// and answers it.
		ns, err := o.beginMany(ctx, ps, starts)
		if err != nil {
			return err
		}
		for j, i := range order {
			a, err := newAttempt(k.spec.Name, ps[j], ns[j], starts[j], c.wall.Now())
			if err != nil {
				return err
			}
			as = append(as, a)
			byReq[i] = a
		}
		return tx.ChargeAttempts().InsertMany(ctx, as)
	})
	if err != nil {
		return nil
	}
	out := make([]*ChargeAttempt, len(many))
	for j, i := range many {
		out[j] = byReq[i]
	}
	return out
}

// called is a charge of ChargeMany whose processor call answered.
type called struct {
	i    int // its request
	a    *ChargeAttempt
	res  ports.ChargeResult
	card *ports.CardInfo
}

// applyMany applies the outcomes of calls in one unit of work of k's owner (applyBatch); if
// that fails, one by one (each attempt is applied once whoever applies it).
func (c *Charger) applyMany(ctx context.Context, k Kind, calls []called) []ChargeResult {
	out := make([]ChargeResult, len(calls))
	pres := make([]*prepared, len(calls))
	batch := true
	for j, cl := range calls {
		pre, err := c.prepare(ctx, cl.a, cl.res, cl.card) // the fee reads FX rates: before any lock
		if err != nil {
			batch = false
			break
		}
		pres[j] = pre
	}
	if batch {
		var applied []*Charged
		err := k.bound.do(ctx, func(ctx context.Context, tx Tx, o owner) error {
			var err error
			applied, err = c.applyBatch(ctx, tx, o, k, calls, pres)
			return err
		})
		if err == nil {
			for j := range calls {
				out[j].Charged = applied[j]
			}
			return out
		}
	}
	for j, cl := range calls {
		out[j].Charged, out[j].Err = c.apply(ctx, k, cl.a, cl.res, cl.card)
	}
	return out
}

// applyBatch is applyIn for each of calls (their payables in the order of calls), with
// payments' writes made for the whole unit of work at once: the attempts locked with one
// statement (after every payable, the protocol's lock order: payables, attempts, payments),
// an attempt no longer pending left alone; the payments inserted with one statement and
// their days' volumes with one write per day and currency; the attempts updated with one;
// then the owner's side of every outcome (ApplyOutcomes for all of them when it is a
// PayableBatchOwner, else ApplyOutcome or KeepCustomerAction of each); the events of every outcome (each outcome's own,
// then its owner's, in the order of calls) with one Outbox().Add, the receipts with one
// Mail().Enqueue; the ledger last (postPayments).
func (c *Charger) applyBatch(ctx context.Context, tx Tx, o owner, k Kind, calls []called, pres []*prepared) ([]*Charged, error) {
	refs := make([]PayableRef, len(calls))
	as := make([]*ChargeAttempt, len(calls))
	for j, cl := range calls {
		refs[j], as[j] = PayableRef{Scope: cl.a.scope, ID: cl.a.reference}, cl.a
	}
	ps, err := o.lockMany(ctx, refs) // one statement when the owner is a PayableLocker
	if err != nil {
		return nil, err
	}
	las, err := tx.ChargeAttempts().LockMany(ctx, as)
	if err != nil {
		return nil, err
	}
	if len(las) != len(calls) {
		return nil, fmt.Errorf("payments: apply: %d attempts locked of %d", len(las), len(calls))
	}
	rs := make([]*Charged, len(calls))
	outs := make([]*ChargeOutcome, len(calls))
	var (
		recs     []*Record
		resolved []*ChargeAttempt
		mails    []core.Mail
	)
	for j, la := range las {
		rs[j] = &Charged{Payable: ps[j], Attempt: la, Outcome: la.outcome}
		if la.status != AttemptPending {
			continue // applied (or abandoned) already: exactly once
		}
		out, err := pres[j].build(k.spec, ps[j], la)
		if err != nil {
			return nil, err
		}
		if err := la.applied(out.Result, c.wall.Now()); err != nil {
			return nil, err
		}
		outs[j] = out
		resolved = append(resolved, la)
		if out.Payment != nil {
			recs = append(recs, out.Payment)
		}
		mails = append(mails, out.Mail...)
	}
	// payments' side (write, for every outcome): the payments first, so that a refused
	// insert leaves nothing.
	if err := insertPayments(ctx, tx, recs); err != nil {
		return nil, fmt.Errorf("payments: apply %d outcomes: %w", len(recs), err)
	}
	if len(resolved) > 0 {
		if err := tx.ChargeAttempts().SaveMany(ctx, resolved); err != nil {
			return nil, fmt.Errorf("payments: apply %d outcomes: %w", len(resolved), err)
		}
	}
	// The owner's side of every outcome: with one statement per table when it is a
	// PayableBatchOwner.
	var (
		owned []PayableOutcome
		at    []int // owned[x] is the outcome of calls[at[x]]
	)
	for j, out := range outs {
		if out != nil {
			owned, at = append(owned, PayableOutcome{P: ps[j], A: las[j], O: out}), append(at, j)
		}
	}
	more, err := o.applyOutcomes(ctx, owned)
	if err != nil {
		return nil, err
	}
	var (
		evs   []core.Event
		posts []*Record
	)
	for x, j := range at {
		out := outs[j]
		evs = append(append(evs, out.Events...), more[x]...)
		r := rs[j]
		r.Applied, r.Outcome, r.Decline, r.Action = true, out.Result, out.Decline, out.Action
		if out.Payment != nil {
			r.Payment = out.Payment.Payment
			if out.Payment.Payment.Status() == StatusSucceeded {
				posts = append(posts, out.Payment)
			}
		}
	}
	if err := tx.Outbox().Add(ctx, evs...); err != nil {
		return nil, err
	}
	if err := tx.Mail().Enqueue(ctx, mails...); err != nil {
		return nil, err
	}
	// The ledger last, as for one charge: the merchant's balances are locked once, and the
	// payments posted together (one journal per scope and instant: five statements for the
	// batch, not five per payment).
	if err := postPayments(ctx, tx, posts); err != nil {
		return nil, err
	}
	return rs, nil
}
