package payments

import (
	"context"
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/modules/ledger"
)

// postPayment posts the succeeded payment of rec to the balance ledger in the unit of work tx
// (D7, D16): its amount and fee, pending until its funds are available (AvailableAt: two days
// after the charge or the settlement, or at once), succeeded at `at`.
func postPayment(ctx context.Context, tx Tx, rec *Record, at time.Time) error {
	p := rec.Payment
	avail := at.Add(FundsDelay)
	if a := rec.AvailableAt(); a != nil {
		avail = *a
	}
	_, err := ledger.PostPayment(ctx, tx, ledger.PaymentFacts{Scope: p.Scope(), PaymentID: p.ID(), Currency: p.Currency(),
		Amount: p.Amount(), Fee: p.Fee().ServiceFeeChargeCurrency, Succeeded: at, AvailableOn: avail})
	if err != nil {
		return fmt.Errorf("payments: post %s to the ledger: %w", p.ID(), err)
	}
	return nil
}

// postPayments posts the succeeded payments of recs, each succeeded when it was created, to the
// balance ledger in the unit of work tx, as postPayment does each, in a number of statements
// that does not grow with recs (ledger.PostPayments: one journal per scope and instant).
func postPayments(ctx context.Context, tx Tx, recs []*Record) error {
	if len(recs) == 0 {
		return nil
	}
	facts := make([]ledger.PaymentFacts, len(recs))
	for i, rec := range recs {
		p := rec.Payment
		at := p.Created()
		avail := at.Add(FundsDelay)
		if a := rec.AvailableAt(); a != nil {
			avail = *a
		}
		facts[i] = ledger.PaymentFacts{Scope: p.Scope(), PaymentID: p.ID(), Currency: p.Currency(), Amount: p.Amount(),
			Fee: p.Fee().ServiceFeeChargeCurrency, Succeeded: at, AvailableOn: avail}
	}
	if _, err := ledger.PostPayments(ctx, tx, facts); err != nil {
		return fmt.Errorf("payments: post %d payments to the ledger: %w", len(recs), err)
	}
	return nil
}

// postRefund posts the succeeded refund r to the balance ledger in the unit of work tx: the
// refund and the part of the fee it reverses.
func postRefund(ctx context.Context, tx Tx, r *Refund, at time.Time) error {
	_, err := ledger.PostRefund(ctx, tx, ledger.RefundFacts{Scope: r.Scope(), RefundID: r.ID(), PaymentID: r.PaymentID(),
		Currency: r.Currency(), Amount: r.Amount(), FeeReversed: r.FeeReversed().ServiceFeeChargeCurrency, Created: at})
	if err != nil {
		return fmt.Errorf("payments: post %s to the ledger: %w", r.ID(), err)
	}
	return nil
}

// disputeFacts are what the ledger posts for the dispute d at `at`: the disputed amount and the
// dispute fee in the charge currency (0 for a dispute opened before the fee was kept).
func disputeFacts(d *Dispute, at time.Time) ledger.DisputeFacts {
	return ledger.DisputeFacts{Scope: d.Scope(), DisputeID: d.ID(), PaymentID: d.PaymentID(), Currency: d.Currency(),
		Amount: d.Amount(), Fee: d.Fee().Amount, At: at}
}

// postDispute posts the opening of the dispute d to the balance ledger in the unit of work tx:
// the disputed amount and the dispute fee leave the available balance.
func postDispute(ctx context.Context, tx Tx, d *Dispute) error {
	if _, err := ledger.PostDispute(ctx, tx, disputeFacts(d, d.Created())); err != nil {
		return fmt.Errorf("payments: post %s to the ledger: %w", d.ID(), err)
	}
	return nil
}

// postDisputeWon posts a won dispute d to the balance ledger in the unit of work tx: the
// amount and the fee come back, at `at`.
func postDisputeWon(ctx context.Context, tx Tx, d *Dispute, at time.Time) error {
	if _, err := ledger.PostDisputeReversal(ctx, tx, disputeFacts(d, at)); err != nil {
		return fmt.Errorf("payments: post %s to the ledger: %w", d.ID(), err)
	}
	return nil
}
