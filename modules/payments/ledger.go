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
