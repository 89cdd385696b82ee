package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// dueBatch is how many subscriptions one unit of work of the sweep claims.
const dueBatch = 100

// dueCharge is an off-session charge of a subscription's invoice the sweep makes after the
// unit of work that found it due commits.
type dueCharge struct {
	scope   core.Scope
	sub     string
	invoice string
	at      time.Time
	method  ports.PaymentMethodKind
	ref     string
}

// applyDue applies what is due on the locked sub at or before until, dated when it fell due,
// and writes it with its events. It reports whether anything changed, and the charge to make
// once the unit of work commits: a renewal makes its invoice here (invoice.finalized) and is
// charged in the next round, so the invoice is recorded before the processor is called.
func (s *Service) applyDue(ctx context.Context, tx Tx, sub *Subscription, until time.Time) (bool, *dueCharge, error) {
	at, ok := sub.DueAt()
	if !ok || at.After(until) {
		return false, nil, nil
	}
	if s.invoices != nil && s.charger != nil {
		if sub.RenewalDue(until) {
			return true, nil, s.renewMany(ctx, tx, []*Subscription{sub})
		}
		if inv, chargeAt, ok := sub.ChargeDue(until); ok {
			c := &dueCharge{scope: sub.Scope(), sub: sub.ID(), invoice: inv, at: chargeAt}
			if id := sub.DefaultMethodID(); id != "" {
				pm, err := tx.PaymentMethods().Get(ctx, sub.Scope(), id)
				if err != nil {
					return false, nil, err
				}
				c.method, c.ref = pm.Type(), pm.ProcessorRef()
				return true, c, nil
			}
			// No method to charge: the attempt fails as a lost card would.
			ch, _ := sub.ChargeFailed(inv, ports.DeclineLostCard, chargeAt)
			if err := tx.Subscriptions().Save(ctx, sub); err != nil {
				return false, nil, err
			}
			return true, nil, tx.Outbox().Add(ctx, changeEvents(ch, sub, chargeAt)...)
		}
	}
	ch, _, err := sub.ProcessDue(until)
	if err != nil || ch == (Change{}) {
		return false, nil, err
	}
	if err := tx.Subscriptions().Save(ctx, sub); err != nil {
		return false, nil, err
	}
	evs := changeEvents(ch, sub, at)
	if ch.TrialWillEnd {
		// The customer is told with the notice.
		if err := tx.Mail().Enqueue(ctx, core.Mail{Kind: MailTrialEnding, Scope: sub.Scope(), SubjectID: sub.ID(), Created: at}); err != nil {
			return false, nil, err
		}
	}
	if sub.Status() == StatusIncompleteExpired || ch.Deleted {
		// An expired or ended subscription's open invoice is voided with it.
		voided, err := s.clearEnded(ctx, tx, sub, ch, at)
		if err != nil {
			return false, nil, err
		}
		evs = append(evs, voided...)
	}
	return true, nil, tx.Outbox().Add(ctx, evs...)
}

// renewMany makes the invoices of the periods that end now (a trial's end, or a renewal) of
// the locked subs, each finalised and numbered (invoice.finalized), and records each on its
// subscription as the invoice to charge: the periods advance. The statements, in tx, do not
// grow with the batch (a renewal batch of one merchant, one currency, one year: seven):
//
//  1. the customers, locked in one statement in id order (Customers().LockMany);
//  2. their balances in the invoices' currencies, one statement (Customers().Balances);
//  3. each merchant's number prefix (one read per merchant), the numbers of each scope and
//     year reserved in one statement, the invoices written in one (Invoicer.OpenInvoices);
//  4. the subscriptions written in one UPDATE (Subscriptions().SaveMany);
//  5. every event of the batch in one Outbox().Add.
//
// Per subscription, only the rare work: a customer balance an invoice takes is written
// (recordApplied, one statement when it takes any). A change scheduled for the period end is
// made in memory (renewalInvoice). Each invoice's content and its balance are computed in
// the subscriptions' order, so two subscriptions of one customer see each other's balance.
func (s *Service) renewMany(ctx context.Context, tx Tx, subs []*Subscription) error {
	if len(subs) == 0 {
		return nil
	}
	// 1. The customers.
	var refs []CustomerRef
	seen := map[CustomerRef]bool{}
	for _, sub := range subs {
		r := CustomerRef{Scope: sub.Scope(), ID: sub.Customer()}
		if !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
	}
	locked, err := tx.Customers().LockMany(ctx, refs)
	if err != nil {
		return err
	}
	customers := make(map[CustomerRef]*Customer, len(locked))
	for _, c := range locked {
		customers[CustomerRef{Scope: c.Scope(), ID: c.ID()}] = c
	}
	// The invoices' content: a change scheduled for the period end is made first, and the
	// proration lines kept for this renewal are billed beside the period (plan_schedule.go).
	reqs := make([]InvoiceRequest, len(subs))
	updated := make([]Change, len(subs))
	var keys []BalanceKey
	keyed := map[BalanceKey]bool{}
	for i, sub := range subs {
		c := customers[CustomerRef{Scope: sub.Scope(), ID: sub.Customer()}]
		if c == nil {
			return ErrCustomerNotFound
		}
		in, ch, carried, err := sub.renewalInvoice(c)
		if err != nil {
			return err
		}
		if carried != 0 {
			// A kept credit larger than the renewal leaves chargeable goes to the customer's
			// balance (rare: one statement), before the balances are read below, so this
			// invoice takes it.
			if err := tx.Customers().AddBalanceTransaction(ctx, newBalanceTransaction(sub.Scope(), sub.Customer(),
				in.Currency, carried, BalanceProrationCredit, sub.ID(), "", sub.s.PeriodEnd)); err != nil {
				return err
			}
		}
		reqs[i], updated[i] = InvoiceRequest{Scope: sub.Scope(), In: in, Now: sub.s.PeriodEnd}, ch
		k := BalanceKey{Scope: sub.Scope(), Customer: sub.Customer(), Currency: in.Currency}
		if !keyed[k] {
			keyed[k] = true
			keys = append(keys, k)
		}
	}
	// 2. The customers' balances are applied to the invoices (balance.go), in order: a credit
	// covering an invoice pays it, and what it took is gone for the next of the customer.
	sums, err := tx.Customers().Balances(ctx, keys)
	if err != nil {
		return err
	}
	balance := make(map[BalanceKey]int64, len(keys))
	for i, k := range keys {
		balance[k] = sums[i]
	}
	for i, sub := range subs {
		k := BalanceKey{Scope: sub.Scope(), Customer: sub.Customer(), Currency: reqs[i].In.Currency}
		in := &reqs[i].In
		in.StartingBalance, in.EndingBalance = balance[k], ApplyBalance(in.Total(), balance[k])
		balance[k] = in.EndingBalance
	}
	// 3. The invoices, numbered.
	opened, err := s.invoices.OpenInvoices(ctx, tx, reqs)
	if err != nil {
		return err
	}
	if len(opened) != len(subs) {
		return fmt.Errorf("billing: %d invoices opened for %d renewals", len(opened), len(subs))
	}
	var evs []core.Event
	for i, sub := range subs {
		at := reqs[i].Now
		if err := sub.StartRenewal(opened[i].ID); err != nil {
			return err
		}
		// Per subscription, only when its invoice took a balance.
		paid, err := recordApplied(ctx, tx, sub, reqs[i].In, opened[i].ID, at)
		if err != nil {
			return err
		}
		ch := updated[i]
		ch.Updated = ch.Updated || paid.Updated
		evs = append(evs, opened[i].Events...)
		evs = append(evs, changeEvents(ch, sub, at)...)
	}
	// 4. The subscriptions.
	if err := tx.Subscriptions().SaveMany(ctx, subs); err != nil {
		return err
	}
	// 5. The events.
	return tx.Outbox().Add(ctx, evs...)
}

// methodChargeDue reports whether what is due on sub by until is an off-session charge of
// its saved default method (applyDue's charge, when the subscription has a method).
func (s *Service) methodChargeDue(sub *Subscription, until time.Time) bool {
	if s.invoices == nil || s.charger == nil || sub.RenewalDue(until) || sub.DefaultMethodID() == "" {
		return false
	}
	_, _, ok := sub.ChargeDue(until)
	return ok
}

// dueCharges are the charges due by until on subs (each methodChargeDue), their saved methods
// read in one statement (PaymentMethods().GetMany), in the subs' order. A method that is not
// there is ErrMethodNotFound, as applyDue's read answers.
func (s *Service) dueCharges(ctx context.Context, tx Tx, subs []*Subscription, until time.Time) ([]dueCharge, error) {
	var refs []MethodRef
	seen := map[MethodRef]bool{}
	for _, sub := range subs {
		r := MethodRef{Scope: sub.Scope(), ID: sub.DefaultMethodID()}
		if !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
	}
	pms, err := tx.PaymentMethods().GetMany(ctx, refs)
	if err != nil {
		return nil, err
	}
	methods := make(map[MethodRef]*PaymentMethod, len(pms))
	for _, pm := range pms {
		methods[MethodRef{Scope: pm.Scope(), ID: pm.ID()}] = pm
	}
	out := make([]dueCharge, 0, len(subs))
	for _, sub := range subs {
		inv, at, _ := sub.ChargeDue(until)
		pm := methods[MethodRef{Scope: sub.Scope(), ID: sub.DefaultMethodID()}]
		if pm == nil {
			return nil, ErrMethodNotFound
		}
		out = append(out, dueCharge{scope: sub.Scope(), sub: sub.ID(), invoice: inv, at: at, method: pm.Type(), ref: pm.ProcessorRef()})
	}
	return out, nil
}

// renewalDue reports whether what is due on sub by until is a renewal the sweep makes.
func (s *Service) renewalDue(sub *Subscription, until time.Time) bool {
	return s.invoices != nil && s.charger != nil && sub.RenewalDue(until)
}

// chargeRequest is the due off-session charge c as the charge protocol takes it: made with
// no transaction open, the attempt recorded before the processor is called and the outcome
// applied after (invoicing's payable owner tells billing, in its unit of work), so a crash in
// between is resolved by the charge-attempt sweep and repeats no charge.
func (s *Service) chargeRequest(c dueCharge) payments.ChargeRequest {
	return payments.ChargeRequest{Kind: s.invoiceKind, Scope: c.scope, PayableID: c.invoice, Now: c.at,
		Method: c.method, Source: payments.Source{PaymentMethodRef: c.ref, OffSession: true}}
}

// charge makes the due off-session charge c alone (Charger.Charge).
func (s *Service) charge(ctx context.Context, c dueCharge) error {
	r, err := s.charger.Charge(ctx, s.chargeRequest(c))
	return s.charged(ctx, c, r, err)
}

// charged applies to the subscription what the charge c came to, when the outcome does not
// tell it already: a debit that is processing (SEPA) is not charged again while it settles;
// an invoice no longer open (paid or voided meanwhile) ends the collection.
func (s *Service) charged(ctx context.Context, c dueCharge, r *payments.Charged, err error) error {
	var ce *core.Error
	switch {
	case err == nil && r.Outcome == ports.OutcomeProcessing,
		errors.As(err, &ce) && ce.Code == codeInvoicePaymentInProgress:
		return s.collectionChange(ctx, c, func(sub *Subscription) bool { return sub.AwaitSettlement(c.invoice) })
	case errors.As(err, &ce) && ce.Code == codeInvoiceNotOpen:
		return s.collectionChange(ctx, c, func(sub *Subscription) bool { return sub.DropCollection(c.invoice, c.at) })
	}
	return err
}

// chargeAll makes the charges cs (in due order) and returns the errors of those that failed.
// The charges due at the same instant are made together (payments.Charger.ChargeMany: each
// attempt recorded before its call, the calls concurrent, the outcomes applied in one unit
// of work); those due later wait until every earlier one is done, so a scope's charges still
// happen in time order.
func (s *Service) chargeAll(ctx context.Context, cs []dueCharge) []error {
	var failed []error
	for len(cs) > 0 {
		n := 1
		for n < len(cs) && cs[n].at.Equal(cs[0].at) {
			n++
		}
		reqs := make([]payments.ChargeRequest, n)
		for i, c := range cs[:n] {
			reqs[i] = s.chargeRequest(c)
		}
		for i, r := range s.charger.ChargeMany(ctx, reqs) {
			if err := s.charged(ctx, cs[i], r.Charged, r.Err); err != nil {
				failed = append(failed, err)
			}
		}
		cs = cs[n:]
	}
	return failed
}

// The invoice's refusals of a new charge (invoicing's errors, by code).
const (
	codeInvoiceNotOpen           = "invoice_not_open"
	codeInvoicePaymentInProgress = "invoice_payment_in_progress"
)

// collectionChange applies fn to the locked subscription of c and saves it if it changed.
func (s *Service) collectionChange(ctx context.Context, c dueCharge, fn func(*Subscription) bool) error {
	return s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		sub, err := tx.Subscriptions().Lock(ctx, c.scope, c.sub)
		if err != nil {
			return subscriptionNotFound(err)
		}
		if !fn(sub) {
			return nil
		}
		return tx.Subscriptions().Save(ctx, sub)
	})
}

// clearEnded clears what a subscription that ends (ch) leaves behind, in its unit of work: a
// setup waiting for 3-D Secure is deleted (an old answer saves no card for it), the net of the
// proration lines it kept for a renewal that will not come goes to the customer's balance (a
// credit as proration_credit, a charge owed as proration_charge_at_cancel), and its latest
// invoice is voided if it is still open. The end, the lines' removal and the balance change
// commit together, so a retried or repeated cancellation (the subscription is canceled, its
// lines gone) cannot carry them twice.
func (s *Service) clearEnded(ctx context.Context, tx Tx, sub *Subscription, ch Change, at time.Time) ([]core.Event, error) {
	if err := tx.PendingSetups().Delete(ctx, sub.Scope(), sub.ID()); err != nil {
		return nil, err
	}
	if ch.Kept != 0 {
		if _, err := tx.Customers().Lock(ctx, sub.Scope(), sub.Customer()); err != nil {
			return nil, customerNotFound(err)
		}
		if err := carryProration(ctx, tx, sub, ch.Kept, BalanceProrationChargeAtCancel, at); err != nil {
			return nil, err
		}
	}
	inv := sub.LatestInvoice()
	if inv == nil || s.invoices == nil {
		return nil, nil
	}
	sub.s.Collection = Collection{}
	if err := tx.Subscriptions().Save(ctx, sub); err != nil {
		return nil, err
	}
	return s.invoices.VoidOpenInvoice(ctx, tx, sub.Scope(), *inv, at)
}

// ProcessDue implements ports.DueProcessor for subscriptions: an incomplete subscription
// expires 23 hours after creation, a trial gives its ending notice, a pending cancellation
// ends the subscription at its period end, each dated when it fell due, with its event. Each batch of at most a hundred, earliest
// first, is one unit of work that claims its rows with SKIP LOCKED, so several processes sweep
// together. With scope nil it covers live scopes and test scopes whose clock is not frozen;
// with a scope, only that scope (the test clock advance).
func (s *Service) ProcessDue(ctx context.Context, scope *core.Scope, until time.Time) (int, error) {
	total := 0
	for {
		claimed, changed := 0, 0
		var charges []dueCharge
		err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
			claimed, changed, charges = 0, 0, nil // Do may run this again
			subs, err := tx.Subscriptions().ClaimDue(ctx, scope, until, dueBatch)
			if err != nil {
				return err
			}
			claimed = len(subs)
			for i := 0; i < len(subs); {
				// A run of renewals (in due order) is renewed together, in statements that do
				// not grow with the run (renewMany); anything else is applied alone.
				j := i
				for j < len(subs) && s.renewalDue(subs[j], until) {
					j++
				}
				if j > i {
					if err := s.renewMany(ctx, tx, subs[i:j]); err != nil {
						return err
					}
					changed += j - i
					i = j
					continue
				}
				// Likewise a run of charges due with a saved method: the methods in one read.
				for j < len(subs) && s.methodChargeDue(subs[j], until) {
					j++
				}
				if j > i {
					cs, err := s.dueCharges(ctx, tx, subs[i:j], until)
					if err != nil {
						return err
					}
					charges = append(charges, cs...)
					changed += j - i
					i = j
					continue
				}
				ok, c, err := s.applyDue(ctx, tx, subs[i], until)
				if err != nil {
					return err
				}
				if ok {
					changed++
				}
				if c != nil {
					charges = append(charges, *c)
				}
				i++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		// The charges found due, each with no transaction open.
		failed := s.chargeAll(ctx, charges)
		total += changed - len(failed)
		// A subscription takes one change per round, in due order, so a second change of the
		// same subscription (a trial's notice, then its cancellation) comes in a later round;
		// a round that changed nothing ends the sweep, and so does one whose only work was
		// charges that could not be made (they stay due for the next sweep).
		if claimed == 0 || changed == 0 {
			return total, nil
		}
		if len(failed) > 0 && len(failed) == changed {
			return total, errors.Join(failed...)
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// NextDue is the earliest due time of the scope's subscriptions at or before until
// (scheduler.NextDuer), so a test clock advance interleaves them with other modules' work in
// time order.
func (s *Service) NextDue(ctx context.Context, scope core.Scope, until time.Time) (time.Time, bool, error) {
	return s.store.NextDue(ctx, scope, until)
}
