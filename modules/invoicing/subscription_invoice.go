package invoicing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// SubscriptionInvoice is the content of a subscription's invoice: its locked lines, in order.
type SubscriptionInvoice struct {
	Subscription  string
	CustomerName  string
	CustomerEmail string
	Currency      core.Currency
	Lines         []SubscriptionLine
	// StartingBalance and EndingBalance: the customer's balance in the currency before and
	// after the invoice took from it; the amount due is total + starting − ending, at least 0.
	StartingBalance, EndingBalance int64
}

// SubscriptionLine is one line of a subscription's invoice: quantity × unit amount of a price
// (a proration credit has a negative unit amount).
type SubscriptionLine struct {
	Description string
	PriceID     string
	ProductID   string
	Quantity    int64
	UnitAmount  int64
}

// numberPrefix is the merchant's invoice number prefix, read on the unit of work's own
// transaction: its setting, or DefaultPrefix of its name.
func numberPrefix(ctx context.Context, tx SettingsTx, merchantID string) (string, error) {
	prefix, name, err := tx.InvoiceSettings().ChosenPrefix(ctx, merchantID)
	if err != nil || prefix != "" {
		return prefix, err
	}
	return DefaultPrefix(name), nil
}

// OpenSubscriptionInvoice writes, inside the caller's unit of work tx, the subscription's
// invoice finalised at now: it takes the next number of the scope and year of now (gap-free:
// the number commits or rolls back with the caller's change), mints the public token and is
// open, due at once (it is charged automatically). The merchant's number prefix is read in tx
// too, so the caller's unit of work takes no second connection. It answers invoice.finalized.
// The amount due is the total with the customer's balance taken (in's starting and ending
// balance); when that leaves nothing, the invoice is paid at once with no payment
// (invoice.payment_succeeded, invoice.paid after invoice.finalized).
func (s *Service) OpenSubscriptionInvoice(ctx context.Context, tx Tx, scope core.Scope, in SubscriptionInvoice, now time.Time) (*Invoice, []core.Event, error) {
	inv, err := subscriptionDraft(scope, in, now)
	if err != nil {
		return nil, nil, err
	}
	prefix, err := numberPrefix(ctx, tx, scope.MerchantID)
	if err != nil {
		return nil, nil, err
	}
	n, err := tx.Invoices().NextNumber(ctx, scope, now.Year())
	if err != nil {
		return nil, nil, err
	}
	evs, err := s.openNumbered(inv, prefix, n, now)
	if err != nil {
		return nil, nil, err
	}
	if err := tx.Invoices().Insert(ctx, inv); err != nil {
		return nil, nil, err
	}
	return inv, evs, nil
}

// SubscriptionInvoiceRequest is one invoice of OpenSubscriptionInvoices: in, of scope,
// finalised at Now.
type SubscriptionInvoiceRequest struct {
	Scope core.Scope
	In    SubscriptionInvoice
	Now   time.Time
}

// OpenedInvoice is an invoice OpenSubscriptionInvoices wrote, with its events.
type OpenedInvoice struct {
	Invoice *Invoice
	Events  []core.Event
}

// OpenSubscriptionInvoices is OpenSubscriptionInvoice for a batch of invoices (a renewal
// batch of the subscription sweep), inside the caller's unit of work tx, with a number of
// statements that does not grow with the batch: each merchant's prefix read once
// (ChosenPrefix), the numbers of every scope and year reserved in one statement
// (NextNumbers: each counter incremented by its count, numbers handed out in the requests'
// order, gap-free since every reserved number is used or the unit of work rolls back), and
// the invoices written in one statement (InsertMany). Every invoice is checked before any
// number is taken. Answers one OpenedInvoice per request, in order.
func (s *Service) OpenSubscriptionInvoices(ctx context.Context, tx Tx, reqs []SubscriptionInvoiceRequest) ([]OpenedInvoice, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	invs := make([]*Invoice, len(reqs))
	prefixes := map[string]string{}
	var merchants []string
	type key struct {
		scope core.Scope
		year  int
	}
	block := map[key]int{} // index into blocks
	var blocks []NumberBlock
	for i, r := range reqs {
		inv, err := subscriptionDraft(r.Scope, r.In, r.Now)
		if err != nil {
			return nil, err
		}
		invs[i] = inv
		if _, ok := prefixes[r.Scope.MerchantID]; !ok {
			prefixes[r.Scope.MerchantID] = ""
			merchants = append(merchants, r.Scope.MerchantID)
		}
		k := key{r.Scope, r.Now.Year()}
		b, ok := block[k]
		if !ok {
			b = len(blocks)
			block[k] = b
			blocks = append(blocks, NumberBlock{Scope: r.Scope, Year: k.year})
		}
		blocks[b].Count++
	}
	// One read per merchant of the batch.
	for _, m := range merchants {
		p, err := numberPrefix(ctx, tx, m)
		if err != nil {
			return nil, err
		}
		prefixes[m] = p
	}
	// One statement for every counter of the batch.
	first, err := tx.Invoices().NextNumbers(ctx, blocks)
	if err != nil {
		return nil, err
	}
	next := make([]int64, len(blocks))
	copy(next, first)
	out := make([]OpenedInvoice, len(reqs))
	for i, r := range reqs {
		b := block[key{r.Scope, r.Now.Year()}]
		evs, err := s.openNumbered(invs[i], prefixes[r.Scope.MerchantID], next[b], r.Now)
		if err != nil {
			return nil, err
		}
		next[b]++
		out[i] = OpenedInvoice{Invoice: invs[i], Events: evs}
	}
	// One statement for every invoice of the batch.
	if err := tx.Invoices().InsertMany(ctx, invs); err != nil {
		return nil, err
	}
	return out, nil
}

// subscriptionDraft is the subscription's invoice in, of scope, checked to be sendable with
// an amount due after its balance that can be charged (or is nothing).
func subscriptionDraft(scope core.Scope, in SubscriptionInvoice, now time.Time) (*Invoice, error) {
	lines := make([]Line, 0, len(in.Lines))
	for _, l := range in.Lines {
		price, product := l.PriceID, l.ProductID
		line := Line{Description: l.Description, Quantity: l.Quantity, UnitAmount: l.UnitAmount, PriceID: &price, Locked: true,
			Currency: in.Currency}
		if product != "" {
			line.ProductID = &product
		}
		lines = append(lines, line)
	}
	inv := NewDraft(scope, Draft{Currency: in.Currency, CustomerName: in.CustomerName, CustomerEmail: in.CustomerEmail,
		Lines: lines, DaysUntilDue: 0, Metadata: map[string]string{}}, now)
	sub := in.Subscription
	inv.subscription = &sub
	inv.startingBalance, inv.endingBalance = in.StartingBalance, in.EndingBalance
	if err := inv.CheckSendable(); err != nil {
		return nil, err
	}
	if due := inv.AmountDue(); due < 0 || due > core.MaxAmount {
		return nil, fmt.Errorf("invoicing: subscription invoice due %d outside 0–%d after its balance", due, core.MaxAmount)
	}
	return inv, nil
}

// openNumbered finalises inv with number n of prefix at now and answers its events: a
// balance that leaves nothing due pays it at once.
func (s *Service) openNumbered(inv *Invoice, prefix string, n int64, now time.Time) ([]core.Event, error) {
	if err := inv.Finalize(prefix, n, core.NewSecretPart(), now); err != nil {
		return nil, err
	}
	evs := []core.Event{event(s.base, EventFinalized, inv, now)}
	if inv.AmountDue() == 0 {
		// The customer's credit pays it whole: paid at once, with no charge and no payment.
		inv.paidByBalance(now)
		evs = append(evs, event(s.base, EventPaymentSucceeded, inv, now), event(s.base, EventPaid, inv, now))
	}
	return evs, nil
}

// VoidOpenIn voids the scope's invoice id inside the caller's unit of work tx, dated at, with
// invoice.voided. An invoice that is no longer open (paid, void) or has a payment in flight
// is left as it is, with no event.
func (s *Service) VoidOpenIn(ctx context.Context, tx Tx, scope core.Scope, id string, at time.Time) ([]core.Event, error) {
	inv, err := tx.Invoices().Lock(ctx, scope, id)
	if err != nil {
		return nil, notFound(err)
	}
	if err := inv.Void(at); errors.Is(err, ErrNotOpen) || errors.Is(err, ErrPaymentInProgress) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if err := tx.Invoices().Save(ctx, inv); err != nil {
		return nil, err
	}
	return []core.Event{event(s.base, EventVoided, inv, at)}, nil
}

// SubscriptionPayments is told, inside the unit of work that pays a subscription's invoice
// (the charge protocol's outcome or settlement), that it was paid: billing makes the
// subscription active there, and savedMethod (the method saved on the hosted page for the
// charge that paid it, "" for none) its default, so the payment and the subscription's change
// commit together.
type SubscriptionPayments interface {
	SubscriptionInvoicePaid(ctx context.Context, tx Tx, inv *Invoice, pay *payments.Payment, savedMethod string, at time.Time) ([]core.Event, error)
	// SubscriptionInvoicesPaid is SubscriptionInvoicePaid of each of paid (a charge batch's
	// invoices, paid in one unit of work), made for all of them at once; it answers each
	// one's events in the order of paid.
	SubscriptionInvoicesPaid(ctx context.Context, tx Tx, paid []PaidInvoice) ([][]core.Event, error)
	// SubscriptionChargeFailed is told that an automatic (off-session) charge of the invoice
	// failed with declineCode: it answers the dunning stage and next attempt the invoice
	// shows ("" stage: no dunning).
	SubscriptionChargeFailed(ctx context.Context, tx Tx, inv *Invoice, declineCode string, at time.Time) (stage string, next *time.Time, evs []core.Event, err error)
	// SubscriptionCustomerAttemptFailed is told that a payment the customer made of the
	// invoice on its hosted page failed (a SEPA debit, at settlement). It is no dunning
	// attempt: the stage and schedule stay, and it answers the retry it rescheduled ("" stage:
	// nothing changed).
	SubscriptionCustomerAttemptFailed(ctx context.Context, tx Tx, inv *Invoice, at time.Time) (stage string, next *time.Time, err error)
}

// PaidInvoice is a subscription's invoice paid by Payment at At, as its subscription is told
// (SubscriptionPayments); SavedMethod is the method saved paying it on its hosted page ("" for
// none).
type PaidInvoice struct {
	Invoice     *Invoice
	Payment     *payments.Payment
	SavedMethod string
	At          time.Time
}

// paid is what the subscription of the paid invoice inv is told (nil: it bills none, or no one
// is told); the method saved for the charge is handed over and no longer kept on the invoice.
func (ow Payables) paid(inv *Invoice, pay *payments.Payment, at time.Time) *PaidInvoice {
	if inv.subscription == nil || ow.subs == nil {
		return nil
	}
	saved := inv.charge.SavedMethod
	inv.charge.SavedMethod = ""
	return &PaidInvoice{Invoice: inv, Payment: pay, SavedMethod: saved, At: at}
}

// tellPaid tells the subscription of one paid invoice (nil: none to tell) and answers its
// events.
func (ow Payables) tellPaid(ctx context.Context, tx Tx, p *PaidInvoice) ([]core.Event, error) {
	if p == nil {
		return nil, nil
	}
	return ow.subs.SubscriptionInvoicePaid(ctx, tx, p.Invoice, p.Payment, p.SavedMethod, p.At)
}

// failed runs the subscription side of a failed automatic charge and sets the invoice's
// dunning fields before its invoice.payment_failed is written.
func (ow Payables) failed(ctx context.Context, tx Tx, inv *Invoice, declineCode string, at time.Time) ([]core.Event, error) {
	if inv.subscription == nil || ow.subs == nil {
		return nil, nil
	}
	stage, next, evs, err := ow.subs.SubscriptionChargeFailed(ctx, tx, inv, declineCode, at)
	if err != nil || stage == "" {
		return evs, err
	}
	inv.dunningStage, inv.nextAttempt = &stage, next
	return evs, nil
}

// customerFailed runs the subscription side of a failed payment the customer made on the
// hosted page: the dunning is unchanged unless a retry that waited for the debit is
// rescheduled.
func (ow Payables) customerFailed(ctx context.Context, tx Tx, inv *Invoice, at time.Time) ([]core.Event, error) {
	if inv.subscription == nil || ow.subs == nil {
		return nil, nil
	}
	stage, next, err := ow.subs.SubscriptionCustomerAttemptFailed(ctx, tx, inv, at)
	if err != nil || stage == "" {
		return nil, err
	}
	inv.dunningStage, inv.nextAttempt = &stage, next
	return nil, nil
}
