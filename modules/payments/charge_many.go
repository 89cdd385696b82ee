package payments

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/kassa-pay/kassa/ports"
)

// ManyWorkers is how many of ChargeMany's charges begin and call the processor at once.
const ManyWorkers = 8

// ManyApplied is how many outcomes one unit of work of ChargeMany applies at most: enough
// that the merchant's balances are locked once for many charges, few enough that the unit of
// work stays short (each outcome is about twenty statements).
const ManyApplied = 20

// ChargeResult is the answer of one request of ChargeMany: what Charge would have answered.
type ChargeResult struct {
	Charged *Charged
	Err     error
}

// ChargeMany runs the charge protocol for reqs of one payable kind (the sweeps' off-session
// charges; a request of another kind, or a customer's answer, is made by Charge alone), with the same guarantees as Charge for each, and
// answers each in the order of reqs:
//
//  1. Each charge begins on its own (Charge's step 1, its own unit of work: the attempt is
//     recorded and committed before its processor call) and calls the processor with no
//     transaction open, ManyWorkers at a time.
//  2. The outcomes of the calls that answered are applied together, ManyApplied to a unit of
//     work of the owner, payables in id order (the protocol's lock order for each: payable,
//     attempt, payment), and the payments' ledger postings last, so that the merchant's
//     balances are locked once per unit of work instead of once per charge.
//  3. A unit of work that fails is applied charge by charge (Charge's step 5: each
//     attempt applied exactly once), and so is everything else Charge does after a call: a
//     failed call, a charge in flight waited for.
func (c *Charger) ChargeMany(ctx context.Context, reqs []ChargeRequest) []ChargeResult {
	out := make([]ChargeResult, len(reqs))
	var (
		mu    sync.Mutex
		calls []called
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, ManyWorkers)
	for i, req := range reqs {
		k, err := c.kinds.of(req.Kind)
		if err == nil && (req.Answer != nil || len(reqs) == 1 || !req.Method.Valid() || req.Kind != reqs[0].Kind) {
			out[i].Charged, out[i].Err = c.Charge(ctx, req) // one charge, or an answer: Charge itself
			continue
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a, _, err := c.begin(ctx, k, req)
			if errors.Is(err, ErrChargeInProgress) {
				out[i].Charged, out[i].Err = c.Charge(ctx, req) // waits for the charge in flight
				return
			}
			if err != nil {
				out[i].Err = err
				return
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
	k, _ := c.kinds.of(reqs[calls[0].i].Kind)
	for len(calls) > 0 {
		n := min(len(calls), ManyApplied)
		for j, r := range c.applyMany(ctx, k, calls[:n]) {
			out[calls[j].i] = r
		}
		calls = calls[n:]
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

// applyMany applies the outcomes of calls in one unit of work of k's owner, payables in the
// order of calls and the payments' ledger postings last; if that fails, one by one (each
// attempt is applied once whoever applies it).
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
		applied := make([]*Charged, len(calls))
		err := k.bound.do(ctx, func(ctx context.Context, tx Tx, o owner) error {
			var posts []*Record
			for j, cl := range calls {
				r, post, err := c.applyIn(ctx, tx, o, k, cl.a, pres[j])
				if err != nil {
					return err
				}
				applied[j] = r
				if post != nil {
					posts = append(posts, post)
				}
			}
			// The ledger last, as for one charge: the merchant's balances are locked once, and
			// the payments posted together (one journal per scope and instant: five statements
			// for the batch, not five per payment).
			return postPayments(ctx, tx, posts)
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
