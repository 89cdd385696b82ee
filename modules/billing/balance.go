package billing

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Why a customer's balance changed (a balance transaction's reason).
const (
	// BalanceProrationCredit: the net credit of a plan change billed now (a downgrade), or
	// of the proration lines a subscription kept for a renewal it will not make (it ended).
	BalanceProrationCredit = "proration_credit"
	// BalanceProrationTooSmall: the net charge of a plan change billed now, below the minimum
	// charge: it is carried to the next invoice instead of being charged alone.
	BalanceProrationTooSmall = "proration_too_small"
	// BalanceProrationChargeAtCancel: the net charge of the proration lines a subscription
	// kept for a renewal it will not make (it was canceled): owed, for the next invoice.
	BalanceProrationChargeAtCancel = "proration_charge_at_cancel"
	// BalanceAppliedToInvoice: the balance an invoice took (its starting minus its ending
	// balance, negated).
	BalanceAppliedToInvoice = "applied_to_invoice"
	// BalanceAdjustment: a change the merchant made by hand (AdjustBalance).
	BalanceAdjustment = "adjustment"
)

// BalanceTransaction is one change of a customer's balance in one currency (cbtxn_…). The
// balance is the sum of the customer's transactions in that currency: negative is credit the
// customer holds, positive is owed by the customer and added to the next invoice.
type BalanceTransaction struct {
	ID           string
	Scope        core.Scope
	Customer     string
	Currency     core.Currency
	Amount       int64
	Reason       string
	Subscription string // "" for an adjustment
	Invoice      string // "" when no invoice is involved
	Description  string // the merchant's note of an adjustment; "" otherwise
	Created      time.Time
}

// newBalanceTransaction is a change of amount of the customer's balance in currency.
func newBalanceTransaction(scope core.Scope, customer string, currency core.Currency, amount int64, reason, sub, invoice string, at time.Time) *BalanceTransaction {
	return &BalanceTransaction{ID: core.NewID("cbtxn_"), Scope: scope, Customer: customer, Currency: currency, Amount: amount,
		Reason: reason, Subscription: sub, Invoice: invoice, Created: at.UTC().Truncate(time.Second)}
}

// ApplyBalance is the customer's balance after an invoice of total (at least the minimum
// charge) takes what it can of balance:
//   - a debit (balance > 0) is added whole, as long as the amount due stays at most the
//     maximum amount;
//   - a credit (balance < 0) covering the whole total pays the invoice (amount due 0);
//   - a smaller credit is taken as far as it leaves at least the minimum charge to pay: the
//     invoice never leaves an amount that cannot be charged, and the credit not taken stays
//     on the balance.
//
// The amount due is total + balance − ending.
func ApplyBalance(total, balance int64) (ending int64) {
	switch {
	case balance > 0:
		take := min(balance, max(core.MaxAmount-total, 0))
		return balance - take
	case balance < 0:
		credit := -balance
		if credit >= total {
			return balance + total
		}
		take := min(credit, max(total-core.MinAmount, 0))
		return balance + take
	}
	return 0
}

// withBalance sets in's starting and ending balance from the customer's balance in in's
// currency, read in tx under the customer's lock (the caller holds it).
func withBalance(ctx context.Context, tx Tx, c *Customer, in *InvoiceInput) error {
	bal, err := tx.Customers().Balance(ctx, c.Scope(), c.ID(), in.Currency)
	if err != nil {
		return err
	}
	in.StartingBalance, in.EndingBalance = bal, ApplyBalance(in.Total(), bal)
	return nil
}

// recordApplied writes, in tx, the balance the invoice invoiceID (made from in) took, and
// when nothing is left to pay, applies the invoice as paid to sub at: no charge is made.
func recordApplied(ctx context.Context, tx Tx, sub *Subscription, in InvoiceInput, invoiceID string, at time.Time) (Change, error) {
	if taken := in.EndingBalance - in.StartingBalance; taken != 0 {
		t := newBalanceTransaction(sub.Scope(), sub.Customer(), in.Currency, taken, BalanceAppliedToInvoice, sub.ID(), invoiceID, at)
		if err := tx.Customers().AddBalanceTransaction(ctx, t); err != nil {
			return Change{}, err
		}
	}
	if in.AmountDue() != 0 {
		return Change{}, nil
	}
	return sub.InvoicePaid(invoiceID, nil, at)
}

// carryProration puts a net proration on the customer's balance, in tx: a credit (net < 0) as
// proration_credit, a charge as charge, the reason the caller names: a plan change billed now
// that makes no invoice carries its credit or its charge below the minimum
// (proration_too_small); a subscription that ends carries the net of the lines it kept for
// the renewal it will not make (proration_charge_at_cancel when it is a charge). The caller
// holds the customer's lock.
func carryProration(ctx context.Context, tx Tx, sub *Subscription, net int64, charge string, at time.Time) error {
	return tx.Customers().AddBalanceTransaction(ctx,
		newBalanceTransaction(sub.Scope(), sub.Customer(), sub.s.Currency, net, prorationReason(net, charge), sub.ID(), "", at))
}

// prorationReason is the reason of a net proration put on a balance: proration_credit for a
// credit (net < 0), charge otherwise.
func prorationReason(net int64, charge string) string {
	if net < 0 {
		return BalanceProrationCredit
	}
	return charge
}
