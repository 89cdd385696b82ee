package invoicing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Kind is the payable kind of invoices: a payment names its invoice in invoice_id, and each
// attempt may leave its own payment (a SEPA debit that failed at settlement stays beside the
// payment of the next attempt).
var Kind = payments.KindSpec{Name: "invoice", Link: payments.LinkInvoice, Payments: payments.OnePaymentPerAttempt}

// BindPayableKind binds invoices, as a payable kind, to their owner (Payables) and to
// invoicing's unit of work.
// checkoutBaseURL is the checkout origin (the hosted page's links in the invoice events);
// subs, when not nil, is told when a subscription's invoice is paid, in the same unit of work.
func BindPayableKind(uow ports.UnitOfWorkOf[Tx], checkoutBaseURL string, subs SubscriptionPayments) (payments.Kind, error) {
	return payments.BindKind[Tx](Kind, uow, Payables{base: strings.TrimRight(checkoutBaseURL, "/"), subs: subs})
}

// Payables is what an invoice does with each step of the charge protocol
// (payments.PayableOwner), inside the Charger's units of work, on the invoice locked first:
//
//	begin           → open or uncollectible, no charge in flight, no debit being settled
//	succeeded       → paid: invoice.paid
//	processing      → the debit is kept until it settles; the invoice stays open
//	failed          → invoice.payment_failed; the invoice stays open for another try
//	requires_action → the 3-D Secure charge is kept on the invoice
//	abandoned       → the charge in flight ends
//	settlement      → paid (invoice.paid) or open again (invoice.payment_failed)
type Payables struct {
	base string // the checkout origin, for the hosted link in events
	subs SubscriptionPayments
}

var _ payments.PayableOwner[Tx] = Payables{}

// LockPayable locks the invoice (ErrNotFound).
func (Payables) LockPayable(ctx context.Context, tx Tx, scope core.Scope, id string) (payments.Payable, error) {
	return tx.Invoices().Lock(ctx, scope, id)
}

var _ payments.PayableLocker[Tx] = Payables{}

// LockPayables locks the invoices of a charge batch with one statement (ErrNotFound).
func (Payables) LockPayables(ctx context.Context, tx Tx, refs []payments.PayableRef) ([]payments.Payable, error) {
	invs, err := tx.Invoices().LockMany(ctx, refs)
	if err != nil {
		return nil, err
	}
	out := make([]payments.Payable, len(invs))
	for i, inv := range invs {
		out[i] = inv
	}
	return out, nil
}

func invoiceOf(p payments.Payable) (*Invoice, error) {
	inv, ok := p.(*Invoice)
	if !ok {
		return nil, fmt.Errorf("invoicing: payable %s is not an invoice", p.ID())
	}
	return inv, nil
}

// BeginCharge checks the locked invoice and marks the attempt in flight.
func (Payables) BeginCharge(ctx context.Context, tx Tx, p payments.Payable, start payments.ChargeStart) (int, error) {
	inv, err := invoiceOf(p)
	if err != nil {
		return 0, err
	}
	n, err := inv.startCharge(start.Kind, start.SavedMethod, start.Now)
	if err != nil {
		return 0, err
	}
	return n, tx.Invoices().Save(ctx, inv)
}

// KeptAction is the invoice's charge waiting for 3-D Secure.
func (Payables) KeptAction(p payments.Payable) *payments.CustomerAction {
	inv, ok := p.(*Invoice)
	if !ok || inv.charge.Pending == nil {
		return nil
	}
	a := *inv.charge.Pending
	return &a
}

// ApplyOutcome pays the invoice (succeeded), keeps the processing debit, or reports the
// failed attempt.
func (ow Payables) ApplyOutcome(ctx context.Context, tx Tx, p payments.Payable, a *payments.ChargeAttempt, o *payments.ChargeOutcome) ([]core.Event, error) {
	inv, err := invoiceOf(p)
	if err != nil {
		return nil, err
	}
	evs, paid, err := ow.outcome(ctx, tx, inv, a, o)
	if err != nil {
		return nil, err
	}
	more, err := ow.tellPaid(ctx, tx, paid)
	if err != nil {
		return nil, err
	}
	return append(evs, more...), tx.Invoices().Save(ctx, inv)
}

// outcome applies o, the outcome of attempt a, to inv (not saved) and answers its events; a
// paid invoice of a subscription answers too what its owner must be told after them
// (SubscriptionPayments), and nothing else is told it yet.
func (ow Payables) outcome(ctx context.Context, tx Tx, inv *Invoice, a *payments.ChargeAttempt, o *payments.ChargeOutcome) ([]core.Event, *PaidInvoice, error) {
	if err := inv.stopCharge(a.IdempotencyKey()); err != nil {
		return nil, nil, err
	}
	now := a.ChargedAt()
	var evs []core.Event
	var paid *PaidInvoice
	switch o.Result {
	case ports.OutcomeSucceeded:
		inv.markPaid(o.Payment.Payment, now)
		if inv.subscription != nil {
			evs = append(evs, event(ow.base, EventPaymentSucceeded, inv, now))
		}
		evs = append(evs, event(ow.base, EventPaid, inv, now))
		paid = ow.paid(inv, o.Payment.Payment, now)
	case ports.OutcomeProcessing:
		inv.charge.Pending = nil
		inv.charge.Processing = o.Payment.Payment.ID()
		inv.charge.ProcessingOffSession = a.OffSession()
		inv.updated = now
	case ports.OutcomeFailed:
		inv.updated = now
		var more []core.Event
		if a.OffSession() && o.Decline != nil {
			var err error
			if more, err = ow.failed(ctx, tx, inv, o.Decline.Code, now); err != nil {
				return nil, nil, err
			}
		}
		evs = append(evs, event(ow.base, EventPaymentFailed, inv, now))
		evs = append(evs, more...)
	default:
		return nil, nil, fmt.Errorf("invoicing: %s: unexpected charge outcome %q", inv.ID(), o.Result)
	}
	return evs, paid, nil
}

var _ payments.PayableBatchOwner[Tx] = Payables{}

// BeginCharges checks and marks each invoice of a charge batch as BeginCharge does, and saves
// them with one statement (Invoices().SaveMany).
func (Payables) BeginCharges(ctx context.Context, tx Tx, ps []payments.Payable, starts []payments.ChargeStart) ([]int, error) {
	invs := make([]*Invoice, len(ps))
	ns := make([]int, len(ps))
	for i, p := range ps {
		inv, err := invoiceOf(p)
		if err != nil {
			return nil, err
		}
		if ns[i], err = inv.startCharge(starts[i].Kind, starts[i].SavedMethod, starts[i].Now); err != nil {
			return nil, err
		}
		invs[i] = inv
	}
	return ns, tx.Invoices().SaveMany(ctx, invs)
}

// ApplyOutcomes applies each outcome of a charge batch to its invoice as ApplyOutcome (or
// KeepCustomerAction) does, tells the subscriptions of the paid ones with one call for all of
// them (SubscriptionInvoicesPaid), and saves the invoices with one statement
// (Invoices().SaveMany). A failed automatic charge tells its subscription on its own
// (SubscriptionChargeFailed): its dunning stage is on the invoice's event.
func (ow Payables) ApplyOutcomes(ctx context.Context, tx Tx, outs []payments.PayableOutcome) ([][]core.Event, error) {
	evs := make([][]core.Event, len(outs))
	invs := make([]*Invoice, len(outs))
	var (
		paid []PaidInvoice
		of   []int // paid[x] is the invoice of outs[of[x]]
	)
	for i, o := range outs {
		inv, err := invoiceOf(o.P)
		if err != nil {
			return nil, err
		}
		invs[i] = inv
		if o.O.Result == ports.OutcomeRequiresAction {
			if err := inv.keepAction(o.A, *o.O.CustomerAction); err != nil {
				return nil, err
			}
			continue
		}
		var p *PaidInvoice
		if evs[i], p, err = ow.outcome(ctx, tx, inv, o.A, o.O); err != nil {
			return nil, err
		}
		if p != nil {
			paid, of = append(paid, *p), append(of, i)
		}
	}
	if len(paid) > 0 {
		more, err := ow.subs.SubscriptionInvoicesPaid(ctx, tx, paid)
		if err != nil {
			return nil, err
		}
		if len(more) != len(paid) {
			return nil, fmt.Errorf("invoicing: events of %d paid invoices for %d", len(more), len(paid))
		}
		for x, i := range of {
			evs[i] = append(evs[i], more[x]...)
		}
	}
	return evs, tx.Invoices().SaveMany(ctx, invs)
}

// KeepCustomerAction keeps the charge waiting for 3-D Secure on the invoice.
func (Payables) KeepCustomerAction(ctx context.Context, tx Tx, p payments.Payable, a *payments.ChargeAttempt, act payments.CustomerAction) error {
	inv, err := invoiceOf(p)
	if err != nil {
		return err
	}
	if err := inv.keepAction(a, act); err != nil {
		return err
	}
	return tx.Invoices().Save(ctx, inv)
}

// keepAction ends the charge in flight of a, which waits for the customer, and keeps act.
func (inv *Invoice) keepAction(a *payments.ChargeAttempt, act payments.CustomerAction) error {
	if err := inv.stopCharge(a.IdempotencyKey()); err != nil {
		return err
	}
	inv.charge.Pending = &act
	return nil
}

// AbandonCharge ends the charge in flight that the processor never received.
func (Payables) AbandonCharge(ctx context.Context, tx Tx, p payments.Payable, a *payments.ChargeAttempt) error {
	inv, err := invoiceOf(p)
	if err != nil {
		return err
	}
	if inv.charge.Charging == a.IdempotencyKey() {
		inv.charge.Charging = ""
	}
	return tx.Invoices().Save(ctx, inv)
}

// ApplySettlement settles the invoice's delayed payment: paid (invoice.paid), or open again
// for another try (invoice.payment_failed).
func (ow Payables) ApplySettlement(ctx context.Context, tx Tx, p payments.Payable, pay *payments.Payment, at time.Time) ([]core.Event, error) {
	inv, err := invoiceOf(p)
	if err != nil {
		return nil, err
	}
	if iid := pay.InvoiceID(); iid == nil || *iid != inv.ID() {
		return nil, fmt.Errorf("invoicing: invoice %s: the payment belongs to another invoice", inv.ID())
	}
	offSession := false // a debit the customer made on the hosted page, unless the invoice says otherwise
	if inv.charge.Processing == pay.ID() {
		offSession = inv.charge.ProcessingOffSession
		inv.charge.Processing, inv.charge.ProcessingOffSession = "", false
	}
	var evs []core.Event
	switch pay.Status() {
	case payments.StatusSucceeded:
		paidNow := inv.Payable()
		if paidNow {
			inv.markPaid(pay, at)
		}
		if paidNow && inv.subscription != nil {
			evs = append(evs, event(ow.base, EventPaymentSucceeded, inv, at))
		}
		evs = append(evs, event(ow.base, EventPaid, inv, at))
		if paidNow {
			more, err := ow.tellPaid(ctx, tx, ow.paid(inv, pay, at))
			if err != nil {
				return nil, err
			}
			evs = append(evs, more...)
		}
	case payments.StatusFailed:
		inv.updated = at
		// A subscription's automatic debit that failed at settlement is a failed attempt of its
		// dunning; one the customer made on the hosted page is not (the schedule stays).
		code := ports.DeclineGenericDecline
		if c := pay.FailureCode(); c != nil && *c != "" {
			code = *c
		}
		var more []core.Event
		var err error
		if offSession {
			more, err = ow.failed(ctx, tx, inv, code, at)
		} else {
			more, err = ow.customerFailed(ctx, tx, inv, at)
		}
		if err != nil {
			return nil, err
		}
		evs = append(evs, event(ow.base, EventPaymentFailed, inv, at))
		evs = append(evs, more...)
	default:
		return nil, fmt.Errorf("invoicing: invoice %s: payment %s is %s, not settled", inv.ID(), pay.ID(), pay.Status())
	}
	return evs, tx.Invoices().Save(ctx, inv)
}
