package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/payments"
)

// billingInvoices lets billing write its subscriptions' invoices through invoicing, in
// billing's unit of work: the one transaction type (postgres.Tx) is both modules' Tx, so the
// invoice, its number and the subscription commit together.
type billingInvoices struct{ svc *invoicing.Service }

var _ billing.Invoicer = billingInvoices{}

func invoicingTxOf(tx billing.Tx) (invoicing.Tx, error) {
	itx, ok := tx.(invoicing.Tx)
	if !ok {
		return nil, fmt.Errorf("kassa: billing's unit of work %T is not invoicing's", tx)
	}
	return itx, nil
}

func (b billingInvoices) OpenInvoice(ctx context.Context, tx billing.Tx, scope core.Scope, in billing.InvoiceInput, now time.Time) (string, []core.Event, error) {
	itx, err := invoicingTxOf(tx)
	if err != nil {
		return "", nil, err
	}
	inv, evs, err := b.svc.OpenSubscriptionInvoice(ctx, itx, scope, subscriptionInvoice(in), now)
	if err != nil {
		return "", nil, err
	}
	return inv.ID(), evs, nil
}

func (b billingInvoices) OpenInvoices(ctx context.Context, tx billing.Tx, reqs []billing.InvoiceRequest) ([]billing.OpenedInvoice, error) {
	itx, err := invoicingTxOf(tx)
	if err != nil {
		return nil, err
	}
	ireqs := make([]invoicing.SubscriptionInvoiceRequest, len(reqs))
	for i, r := range reqs {
		ireqs[i] = invoicing.SubscriptionInvoiceRequest{Scope: r.Scope, In: subscriptionInvoice(r.In), Now: r.Now}
	}
	opened, err := b.svc.OpenSubscriptionInvoices(ctx, itx, ireqs)
	if err != nil {
		return nil, err
	}
	out := make([]billing.OpenedInvoice, len(opened))
	for i, o := range opened {
		out[i] = billing.OpenedInvoice{ID: o.Invoice.ID(), Events: o.Events}
	}
	return out, nil
}

// subscriptionInvoice is billing's invoice input as invoicing takes it.
func subscriptionInvoice(in billing.InvoiceInput) invoicing.SubscriptionInvoice {
	lines := make([]invoicing.SubscriptionLine, 0, len(in.Lines))
	for _, l := range in.Lines {
		lines = append(lines, invoicing.SubscriptionLine{Description: l.Description, PriceID: l.PriceID, ProductID: l.ProductID,
			Quantity: l.Quantity, UnitAmount: l.UnitAmount})
	}
	return invoicing.SubscriptionInvoice{Subscription: in.Subscription, CustomerName: in.CustomerName, CustomerEmail: in.CustomerEmail,
		Currency: in.Currency, Lines: lines, StartingBalance: in.StartingBalance, EndingBalance: in.EndingBalance}
}

func (b billingInvoices) VoidOpenInvoice(ctx context.Context, tx billing.Tx, scope core.Scope, id string, at time.Time) ([]core.Event, error) {
	itx, err := invoicingTxOf(tx)
	if err != nil {
		return nil, err
	}
	return b.svc.VoidOpenIn(ctx, itx, scope, id, at)
}

func (b billingInvoices) InvoiceProcessing(ctx context.Context, scope core.Scope, id string) (bool, error) {
	inv, err := b.svc.Get(ctx, scope, id)
	if err != nil {
		return false, err
	}
	return inv.Processing(), nil
}

func (b billingInvoices) InvoiceAwaitsAction(ctx context.Context, scope core.Scope, id string) (bool, error) {
	inv, err := b.svc.Get(ctx, scope, id)
	if err != nil {
		return false, err
	}
	return inv.AwaitsAction(), nil
}

// subscriptionPayments tells billing, in the unit of work that pays a subscription's invoice,
// that it was paid.
type subscriptionPayments struct{ bill *billing.Service }

var _ invoicing.SubscriptionPayments = (*subscriptionPayments)(nil)

func (h *subscriptionPayments) SubscriptionInvoicePaid(ctx context.Context, tx invoicing.Tx, inv *invoicing.Invoice, _ *payments.Payment, savedMethod string, at time.Time) ([]core.Event, error) {
	sub := inv.Subscription()
	if h.bill == nil || sub == nil {
		return nil, nil
	}
	btx, ok := tx.(billing.Tx)
	if !ok {
		return nil, fmt.Errorf("kassa: invoicing's unit of work %T is not billing's", tx)
	}
	return h.bill.InvoicePaid(ctx, btx, inv.Scope(), *sub, inv.ID(), savedMethod, at)
}

// SubscriptionInvoicesPaid tells billing, in the unit of work that pays a charge batch's
// invoices, that they were paid (billing.InvoicesPaid: one statement per table for all).
func (h *subscriptionPayments) SubscriptionInvoicesPaid(ctx context.Context, tx invoicing.Tx, paid []invoicing.PaidInvoice) ([][]core.Event, error) {
	evs := make([][]core.Event, len(paid))
	var (
		told []billing.PaidInvoice
		of   []int // told[x] is paid[of[x]]
	)
	for i, p := range paid {
		if sub := p.Invoice.Subscription(); h.bill != nil && sub != nil {
			told = append(told, billing.PaidInvoice{Scope: p.Invoice.Scope(), Subscription: *sub, Invoice: p.Invoice.ID(),
				SavedMethod: p.SavedMethod, At: p.At})
			of = append(of, i)
		}
	}
	if len(told) == 0 {
		return evs, nil
	}
	btx, ok := tx.(billing.Tx)
	if !ok {
		return nil, fmt.Errorf("kassa: invoicing's unit of work %T is not billing's", tx)
	}
	more, err := h.bill.InvoicesPaid(ctx, btx, told)
	if err != nil {
		return nil, err
	}
	for x, i := range of {
		evs[i] = more[x]
	}
	return evs, nil
}

var _ invoicing.SubscriptionMethods = (*subscriptionPayments)(nil)

// SaveInvoiceMethod saves, through billing, the method a subscription's invoice is paid with
// on its hosted page (billing's setup; no transaction is open here). A setup that asks for
// 3-D Secure answers its action.
func (h *subscriptionPayments) SaveInvoiceMethod(ctx context.Context, scope core.Scope, sub, invoiceID string, in invoicing.PayInput, now time.Time) (*invoicing.SavedMethod, error) {
	if h.bill == nil {
		return nil, nil
	}
	pm, act, err := h.bill.SaveInvoiceMethod(ctx, scope, sub, invoiceID, billing.MethodInput{Method: in.Method, Card: in.Card, SEPA: in.SEPA}, now)
	if err != nil {
		return nil, err
	}
	if act != nil {
		return &invoicing.SavedMethod{Action: act}, nil
	}
	if pm == nil {
		return nil, nil
	}
	return &invoicing.SavedMethod{ID: pm.ID(), ProcessorRef: pm.ProcessorRef()}, nil
}

// CompleteInvoiceSetup answers, through billing, the setup of the invoice's method that waits
// for 3-D Secure (the processor is called with no transaction open).
func (h *subscriptionPayments) CompleteInvoiceSetup(ctx context.Context, scope core.Scope, sub, invoiceID string, approve bool, now time.Time) (*invoicing.SavedMethod, error) {
	if h.bill == nil {
		return nil, nil
	}
	pm, err := h.bill.CompleteInvoiceSetup(ctx, scope, sub, invoiceID, approve, now)
	var d *billing.DeclineError
	if errors.As(err, &d) {
		return nil, &invoicing.DeclineError{DeclineCode: d.DeclineCode, Message: d.Message, Param: d.Param}
	}
	if err != nil || pm == nil {
		return nil, err
	}
	return &invoicing.SavedMethod{ID: pm.ID(), ProcessorRef: pm.ProcessorRef()}, nil
}

func (h *subscriptionPayments) SubscriptionChargeFailed(ctx context.Context, tx invoicing.Tx, inv *invoicing.Invoice, declineCode string, at time.Time) (string, *time.Time, []core.Event, error) {
	sub := inv.Subscription()
	if h.bill == nil || sub == nil {
		return "", nil, nil, nil
	}
	btx, ok := tx.(billing.Tx)
	if !ok {
		return "", nil, nil, fmt.Errorf("kassa: invoicing's unit of work %T is not billing's", tx)
	}
	d, evs, err := h.bill.ChargeFailed(ctx, btx, inv.Scope(), *sub, inv.ID(), declineCode, at)
	return d.Stage, d.NextAttempt, evs, err
}

func (h *subscriptionPayments) SubscriptionCustomerAttemptFailed(ctx context.Context, tx invoicing.Tx, inv *invoicing.Invoice, at time.Time) (string, *time.Time, error) {
	sub := inv.Subscription()
	if h.bill == nil || sub == nil {
		return "", nil, nil
	}
	btx, ok := tx.(billing.Tx)
	if !ok {
		return "", nil, fmt.Errorf("kassa: invoicing's unit of work %T is not billing's", tx)
	}
	d, err := h.bill.CustomerAttemptFailed(ctx, btx, inv.Scope(), *sub, inv.ID(), at)
	return d.Stage, d.NextAttempt, err
}
