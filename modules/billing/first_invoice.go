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

// InvoiceInput is the content of a subscription's invoice: its lines, in order (the period's
// line, and on a renewal the proration lines kept for it).
type InvoiceInput struct {
	Subscription  string
	CustomerName  string
	CustomerEmail string
	Currency      core.Currency
	Lines         []InvoiceLine
	// StartingBalance and EndingBalance are the customer's balance in the invoice's currency
	// before and after the invoice (ApplyBalance); amount due = total + starting − ending.
	StartingBalance, EndingBalance int64
}

// Total is the sum of the lines (a subscription's lines carry no VAT).
func (in InvoiceInput) Total() int64 {
	var t int64
	for _, l := range in.Lines {
		t += l.Quantity * l.UnitAmount
	}
	return t
}

// AmountDue is what the invoice leaves to charge: its total with the balance applied.
func (in InvoiceInput) AmountDue() int64 { return in.Total() + in.StartingBalance - in.EndingBalance }

// InvoiceLine is one line of a subscription's invoice: quantity × unit amount (a credit has a
// negative unit amount), naming the price it bills.
type InvoiceLine struct {
	Description string
	PriceID     string
	ProductID   string
	Quantity    int64
	UnitAmount  int64
}

// Invoicer writes a subscription's invoices inside billing's units of work (invoicing, wired
// in the composition root): numbered and open, or voided.
type Invoicer interface {
	// OpenInvoice writes the finalised invoice in tx, numbered with the merchant's prefix read
	// in tx too (no second connection), and answers its id and invoice.finalized.
	OpenInvoice(ctx context.Context, tx Tx, scope core.Scope, in InvoiceInput, now time.Time) (string, []core.Event, error)
	// OpenInvoices is OpenInvoice for a batch (a renewal batch of the sweep) in a number of
	// statements that does not grow with the batch: each merchant's prefix read once, the
	// numbers of each scope and year reserved in one statement and handed out in the
	// requests' order, the invoices written in one statement. One answer per request, in order.
	OpenInvoices(ctx context.Context, tx Tx, reqs []InvoiceRequest) ([]OpenedInvoice, error)
	// VoidOpenInvoice voids the invoice in tx if it is still open, with invoice.voided.
	VoidOpenInvoice(ctx context.Context, tx Tx, scope core.Scope, id string, at time.Time) ([]core.Event, error)
	// InvoiceProcessing reports whether a payment of the invoice is in flight (a SEPA debit
	// that has not settled yet); a read of its own, outside any unit of work.
	InvoiceProcessing(ctx context.Context, scope core.Scope, id string) (bool, error)
	// InvoiceAwaitsAction reports whether a charge of the invoice waits for the customer's
	// 3-D Secure answer; a read of its own, outside any unit of work.
	InvoiceAwaitsAction(ctx context.Context, scope core.Scope, id string) (bool, error)
}

// InvoiceRequest is one invoice of Invoicer.OpenInvoices: In, of Scope, finalised at Now.
type InvoiceRequest struct {
	Scope core.Scope
	In    InvoiceInput
	Now   time.Time
}

// OpenedInvoice is the id and the events of an invoice Invoicer.OpenInvoices wrote.
type OpenedInvoice struct {
	ID     string
	Events []core.Event
}

// invoiceInput is the invoice of the subscription's current period.
func (s *Subscription) invoiceInput(customer *Customer) InvoiceInput {
	desc := fmt.Sprintf("Subscription %s, %s to %s", s.s.PriceID, s.s.PeriodStart.Format("2 Jan 2006"), s.s.PeriodEnd.Format("2 Jan 2006"))
	return InvoiceInput{Subscription: s.s.ID, CustomerName: customer.Name(), CustomerEmail: customer.Email(), Currency: s.s.Currency,
		Lines: []InvoiceLine{{Description: desc, PriceID: s.s.PriceID, Quantity: s.s.Quantity, UnitAmount: s.s.UnitAmount}}}
}

// attachFirstInvoice names the subscription's first invoice and mints its first payment (pi_…)
// with the client secret the customer's browser confirms it with.
func (s *Subscription) attachFirstInvoice(invoiceID string) {
	id := invoiceID
	s.s.LatestInvoice = &id
	s.s.PaymentIntent = core.NewID("pi_")
	secret := s.s.PaymentIntent + "_secret_" + core.NewSecretPart()
	s.s.ClientSecret = &secret
}

// LatestInvoice is the subscription's latest invoice, nil when it has none.
func (s *Subscription) LatestInvoice() *string { return copyString(s.s.LatestInvoice) }

// FirstInvoicePaid is the paid first invoice invoiceID of an incomplete subscription: it is
// active, with dm (the method the customer paid with) as its default. Any other invoice, or a
// subscription no longer incomplete, changes nothing.
func (s *Subscription) FirstInvoicePaid(invoiceID string, dm *DefaultMethod, at time.Time) Change {
	if s.s.Status != StatusIncomplete || s.s.LatestInvoice == nil || *s.s.LatestInvoice != invoiceID {
		return Change{}
	}
	at = at.UTC().Truncate(time.Second)
	s.s.Status, s.s.Updated = StatusActive, at
	if dm != nil {
		s.s.DefaultMethod = dm
	}
	return Change{Updated: true}
}

// InvoicePaid is told, inside the unit of work that pays invoice invoiceID of subscription
// subID, that it was paid (Subscription.InvoicePaid): the first invoice makes the
// subscription active, with the customer's default method (the one the first payment was
// made with) as its own; a renewal's ends its collection; either with
// customer.subscription.updated. savedMethod, when not "", is the method the customer saved
// paying the invoice on its hosted page: it becomes the subscription's default, whatever the
// invoice (the first, or one in collection after a failed renewal). A setup waiting for 3-D
// Secure to save a card for this invoice is deleted with it. An invoice whose subscription is
// gone pays alone. It is InvoicesPaid of the one invoice.
func (s *Service) InvoicePaid(ctx context.Context, tx Tx, scope core.Scope, subID, invoiceID, savedMethod string, at time.Time) ([]core.Event, error) {
	evs, err := s.InvoicesPaid(ctx, tx, []PaidInvoice{{Scope: scope, Subscription: subID, Invoice: invoiceID, SavedMethod: savedMethod, At: at}})
	if err != nil {
		return nil, err
	}
	return evs[0], nil
}

// paidWith is the method that becomes the default of subscription sub, locked, as an invoice
// of it is paid (InvoicePaid): savedMethod when not "", else for an incomplete one the
// customer's default (locking the customer); nil for none.
func paidWith(ctx context.Context, tx Tx, sub *Subscription, savedMethod string) (*DefaultMethod, error) {
	scope := sub.Scope()
	id := &savedMethod
	if savedMethod == "" {
		if sub.s.Status != StatusIncomplete {
			return nil, nil
		}
		c, err := tx.Customers().Lock(ctx, scope, sub.Customer())
		if err != nil {
			return nil, customerNotFound(err)
		}
		if id = c.DefaultPaymentMethod(); id == nil {
			return nil, nil
		}
	}
	pm, err := tx.PaymentMethods().Get(ctx, scope, *id)
	if err != nil {
		return nil, err
	}
	return &DefaultMethod{ID: pm.ID(), Summary: pm.Summary()}, nil
}

// PaidInvoice is an invoice of a subscription, paid at At (InvoicesPaid); SavedMethod is the
// method saved paying it on its hosted page ("" for none).
type PaidInvoice struct {
	Scope        core.Scope
	Subscription string
	Invoice      string
	SavedMethod  string
	At           time.Time
}

// InvoicesPaid is InvoicePaid for several invoices at once (those a charge batch paid in one
// unit of work; InvoicePaid is its one-invoice case), with one statement per table for all of
// them: their subscriptions locked
// (Subscriptions().LockMany), the setups waiting for 3-D Secure to save a card for them
// deleted (PendingSetups().DeleteForInvoices), the subscriptions that changed saved
// (Subscriptions().SaveMany). A method to read (a saved one, or an incomplete subscription's
// customer's default) is read for its invoice alone. It answers each invoice's events in the
// order of paid.
func (s *Service) InvoicesPaid(ctx context.Context, tx Tx, paid []PaidInvoice) ([][]core.Event, error) {
	refs := make([]SubscriptionRef, len(paid))
	for i, p := range paid {
		refs[i] = SubscriptionRef{Scope: p.Scope, ID: p.Subscription}
	}
	locked, err := tx.Subscriptions().LockMany(ctx, refs)
	if err != nil {
		return nil, err
	}
	subs := make(map[SubscriptionRef]*Subscription, len(locked))
	for _, sub := range locked {
		subs[SubscriptionRef{Scope: sub.Scope(), ID: sub.ID()}] = sub
	}
	setups := make([]SetupRef, 0, len(paid))
	for i, p := range paid {
		if subs[refs[i]] != nil { // an invoice whose subscription is gone pays alone
			setups = append(setups, SetupRef{Scope: p.Scope, Subscription: p.Subscription, Invoice: p.Invoice})
		}
	}
	// A challenge still waiting to save a card for one of these invoices is stale once it is
	// paid: an old answer must neither save that card nor charge it.
	if err := tx.PendingSetups().DeleteForInvoices(ctx, setups); err != nil {
		return nil, err
	}
	evs := make([][]core.Event, len(paid))
	var changed []*Subscription
	saved := make(map[*Subscription]bool, len(locked))
	for i, p := range paid {
		sub := subs[refs[i]]
		if sub == nil {
			continue
		}
		dm, err := paidWith(ctx, tx, sub, p.SavedMethod)
		if err != nil {
			return nil, err
		}
		ch, err := sub.InvoicePaid(p.Invoice, dm, p.At)
		if err != nil {
			return nil, err
		}
		if ch == (Change{}) {
			continue
		}
		if !saved[sub] {
			saved[sub] = true
			changed = append(changed, sub)
		}
		evs[i] = changeEvents(ch, sub, p.At)
	}
	if err := tx.Subscriptions().SaveMany(ctx, changed); err != nil {
		return nil, err
	}
	return evs, nil
}

// ChargeFailed is told, inside the unit of work that records a failed off-session charge of
// invoice invoiceID of subscription subID, that it failed (Subscription.ChargeFailed): the
// dunning stage the invoice shows, and customer.subscription.updated when the status moved.
func (s *Service) ChargeFailed(ctx context.Context, tx Tx, scope core.Scope, subID, invoiceID, declineCode string, at time.Time) (Dunning, []core.Event, error) {
	sub, err := tx.Subscriptions().Lock(ctx, scope, subID)
	if errors.Is(err, ErrSubscriptionMissing) {
		return Dunning{}, nil, nil
	}
	if err != nil {
		return Dunning{}, nil, err
	}
	ch, d := sub.ChargeFailed(invoiceID, declineCode, at)
	if d.Stage == "" {
		return d, nil, nil
	}
	if err := tx.Subscriptions().Save(ctx, sub); err != nil {
		return Dunning{}, nil, err
	}
	// Every failure e-mails the customer the hosted link and the amount due.
	// A hard decline asks for another method; authentication_required asks the customer to
	// confirm the payment on the hosted page (the retries go on: it is no hard decline).
	subject := DunningSubject(invoiceID, d.Stage, HardDecline(declineCode) && d.Stage == StageFinal)
	if declineCode == ports.DeclineAuthenticationRequired {
		subject = DunningAuthSubject(invoiceID, d.Stage)
	}
	if err := tx.Mail().Enqueue(ctx, core.Mail{Kind: MailDunning, Scope: scope, SubjectID: subject,
		Created: at}); err != nil {
		return Dunning{}, nil, err
	}
	return d, changeEvents(ch, sub, at), nil
}

// CustomerAttemptFailed is told, in tx, that the customer's own payment of invoiceID on its
// hosted page failed (a SEPA debit, at settlement). It is no dunning attempt: no stage, no
// e-mail, the schedule of automatic retries stays; a retry that fell due while the debit
// settled is made now. The invoice counts the attempt in attempt_count.
func (s *Service) CustomerAttemptFailed(ctx context.Context, tx Tx, scope core.Scope, subID, invoiceID string, at time.Time) (Dunning, error) {
	sub, err := tx.Subscriptions().Lock(ctx, scope, subID)
	if errors.Is(err, ErrSubscriptionMissing) {
		return Dunning{}, nil
	}
	if err != nil {
		return Dunning{}, err
	}
	d := sub.CustomerAttemptFailed(invoiceID, at)
	if d.Stage == "" {
		return d, nil
	}
	return d, tx.Subscriptions().Save(ctx, sub)
}

// confirmFirstCharge confirms the first payment of a subscription without a trial: the
// method is saved by the processor (no money moves, no transaction open) and recorded as the
// customer's default, then the first invoice is charged with it through the charge protocol
// (the invoice is the payable); its owner makes the subscription active in the unit of work
// that pays the invoice. A refusal is a *DeclineError (402): the invoice stays open and the
// subscription incomplete, and the customer may try again until it expires. A method whose
// setup asks for 3-D Secure is kept as a pending setup and the answer carries the action
// (ResolveFirstPayment goes on from there); a card saved without one deletes such a pending
// setup of an earlier card in the unit of work that records it.
func (s *Service) confirmFirstCharge(ctx context.Context, sub *Subscription, c *Customer, saver ports.MethodSaver, in MethodInput, now time.Time) (*FirstPayment, error) {
	scope := sub.Scope()
	inv := sub.s.LatestInvoice
	if inv == nil {
		return nil, ErrPaymentIntentState
	}
	if s.charger == nil || s.invoices == nil {
		return nil, ErrProcessorUnavailable
	}
	if _, ok := s.charger.Processor(scope.Env); !ok {
		return nil, ErrProcessorUnavailable
	}
	if processing, err := s.invoices.InvoiceProcessing(ctx, scope, *inv); err != nil {
		return nil, err
	} else if processing {
		return nil, ErrPaymentIntentState // a debit of it is settling: nothing to confirm
	}
	res, act, err := s.setupMethod(ctx, saver, scope, sub.ID(), *inv, sub.PaymentIntent(), c, in, now)
	if err != nil {
		return nil, err
	}
	if act != nil {
		return &FirstPayment{Subscription: sub, Amount: sub.Amount(), Action: act}, nil
	}
	return s.recordAndChargeFirst(ctx, sub, in.Method, func(ctx context.Context, tx Tx) (*PaymentMethod, error) {
		if err := tx.PendingSetups().Delete(ctx, scope, sub.ID()); err != nil {
			return nil, err // this card replaces one still waiting for 3-D Secure
		}
		_, pm, err := RecordSavedMethod(ctx, tx, scope, c.ID(), Saved{Type: in.Method, ProcessorRef: res.PaymentMethodRef,
			Card: res.Card, SEPA: res.SEPA}, res.CustomerRef, true, now)
		return pm, err
	}, now)
}

// recordAndChargeFirst records the saved method of a first payment without a trial (record,
// in one unit of work with the subscription checked) and then, with that unit of work
// committed, charges the first invoice with it.
func (s *Service) recordAndChargeFirst(ctx context.Context, sub *Subscription, method ports.PaymentMethodKind,
	record func(ctx context.Context, tx Tx) (*PaymentMethod, error), now time.Time) (*FirstPayment, error) {
	scope := sub.Scope()
	inv := sub.s.LatestInvoice
	if inv == nil || s.charger == nil {
		return nil, ErrPaymentIntentState
	}
	var ref string
	err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		locked, err := tx.Subscriptions().Lock(ctx, scope, sub.ID())
		if err != nil {
			return subscriptionNotFound(err)
		}
		if err := locked.CheckConfirmable(now); err != nil {
			return err
		}
		pm, err := record(ctx, tx)
		if err != nil {
			return err
		}
		ref = pm.ProcessorRef()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r, err := s.charger.Charge(ctx, payments.ChargeRequest{Kind: s.invoiceKind, Scope: scope, PayableID: *inv, Now: now,
		Method: method, Source: payments.Source{PaymentMethodRef: ref}})
	return s.firstChargeAnswer(ctx, sub, r, err)
}

// resolveFirstCharge answers the first invoice's charge that waits for 3-D Secure through the
// charge protocol (the invoice keeps it).
func (s *Service) resolveFirstCharge(ctx context.Context, sub *Subscription, approve bool, now time.Time) (*FirstPayment, error) {
	inv := sub.s.LatestInvoice
	if inv == nil || sub.s.TrialEnd != nil || s.charger == nil {
		return nil, ErrNoPendingAction
	}
	r, err := s.charger.Charge(ctx, payments.ChargeRequest{Kind: s.invoiceKind, Scope: sub.Scope(), PayableID: *inv, Now: now,
		Answer: &payments.ActionAnswer{Approve: approve}})
	if errors.Is(err, payments.ErrNoCustomerAction) {
		return nil, ErrNoPendingAction
	}
	return s.firstChargeAnswer(ctx, sub, r, err)
}

// firstChargeAnswer turns a charge of the first invoice into the first payment's answer: a
// decline is a *DeclineError, a charge waiting for 3-D Secure answers its action, anything
// else the first payment as it now is.
func (s *Service) firstChargeAnswer(ctx context.Context, sub *Subscription, r *payments.Charged, err error) (*FirstPayment, error) {
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) && ce.Type == core.TypeInvalidState {
			return nil, ErrPaymentIntentState // the invoice was voided (expired) or paid meanwhile
		}
		return nil, err
	}
	if r.Applied {
		if d := r.Decline; d != nil {
			return nil, &DeclineError{DeclineCode: d.Code, Message: d.Message, Param: d.Param}
		}
	}
	out, err := s.store.Subscription(ctx, sub.Scope(), sub.ID())
	if err != nil {
		return nil, subscriptionNotFound(err)
	}
	fp, err := s.firstPayment(ctx, out)
	if err != nil {
		return nil, err
	}
	if r.Applied && r.Action != nil {
		act := *r.Action
		fp.Action = &act
	}
	return fp, nil
}
