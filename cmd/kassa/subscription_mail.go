package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/kassa-pay/kassa/adapters/email"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/ports"
)

// dunningComposer writes billing's dunning e-mails (billing.MailDunning) from the invoice as
// it is when sent, with the e-mail adapter's templates: the stage and whether the decline was
// hard come from the mail's subject, so each failure's mail says what that failure meant.
type dunningComposer struct{ invoices *invoicing.Service }

func (c dunningComposer) ComposeMail(ctx context.Context, m core.Mail) (ports.Message, error) {
	id, stage, hard, auth, ok := billing.ParseDunningMail(m.SubjectID)
	if m.Kind != billing.MailDunning || !ok {
		return ports.Message{}, ports.Permanent(fmt.Errorf("kassa: %q %q is not a dunning e-mail", m.Kind, m.SubjectID))
	}
	h, err := c.invoices.Document(ctx, m.Scope, id)
	if errors.Is(err, invoicing.ErrInvoiceNotFound) {
		return ports.Message{}, ports.Permanent(err)
	}
	if err != nil {
		return ports.Message{}, err
	}
	inv := h.Invoice
	u := c.invoices.HostedURL(inv)
	if u == nil || inv.Number() == nil || inv.IssueDate() == nil {
		return ports.Message{}, ports.Permanent(fmt.Errorf("kassa: dunning e-mail: %s was never sent", inv.ID()))
	}
	d := email.Dunning{Stage: email.DunningStage(stage), CustomerName: inv.CustomerName(), MerchantName: h.Merchant.Name,
		InvoiceNumber: *inv.Number(), AmountDue: inv.Total() + inv.AppliedBalance() - inv.AmountPaid(), Currency: inv.Currency(), URL: *u,
		HardDecline: hard, AuthenticationRequired: auth, TookBalance: inv.TookBalance(), Total: inv.Total(), AppliedBalance: inv.AppliedBalance()}
	if next, ok := billing.NextAttemptAfter(stage, hard, *inv.IssueDate()); ok {
		d.NextAttempt = &next
	}
	return email.DunningMessage(m.Scope, inv.CustomerEmail(), d)
}

// trialEndingComposer writes the e-mail before a trial ends (billing.MailTrialEnding) from
// the subscription as it is when sent.
type trialEndingComposer struct {
	billing   *billing.Service
	merchants identityMerchants
}

func (c trialEndingComposer) ComposeMail(ctx context.Context, m core.Mail) (ports.Message, error) {
	if m.Kind != billing.MailTrialEnding {
		return ports.Message{}, ports.Permanent(fmt.Errorf("kassa: %q is not a trial e-mail", m.Kind))
	}
	sub, err := c.billing.Subscription(ctx, m.Scope, m.SubjectID)
	if errors.Is(err, billing.ErrSubscriptionNotFound) {
		return ports.Message{}, ports.Permanent(err)
	}
	if err != nil {
		return ports.Message{}, err
	}
	s := sub.Snapshot()
	if s.TrialEnd == nil {
		return ports.Message{}, ports.Permanent(fmt.Errorf("kassa: trial e-mail: %s has no trial", s.ID))
	}
	cu, err := c.billing.Customer(ctx, m.Scope, s.Customer)
	if err != nil {
		return ports.Message{}, err
	}
	mer, err := c.merchants.InvoiceMerchant(ctx, m.Scope.MerchantID)
	if err != nil {
		return ports.Message{}, err
	}
	tr := email.TrialEnding{CustomerName: cu.Name(), MerchantName: mer.Name, TrialEnd: *s.TrialEnd, Amount: sub.Amount(),
		Currency: s.Currency, Interval: s.Interval, IntervalCount: s.IntervalCount}
	if d := s.DefaultMethod; d != nil && d.Last4 != "" {
		tr.PaymentMethod = d.Brand + " •••• " + d.Last4
		if d.Brand == "" {
			tr.PaymentMethod = "•••• " + d.Last4
		}
	}
	return email.TrialEndingMessage(m.Scope, cu.Email(), tr)
}
