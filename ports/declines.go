package ports

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// DeclinedCharge is one charge the processor declined, as the dashboard lists it. A declined
// charge creates no payment, so this read model is the only place it shows.
type DeclinedCharge struct {
	// PayableID is what was being paid: a checkout session (cs_…) today.
	PayableID string
	// Attempt is the charge's number among the payable's charges (1 for the first).
	Attempt int
	// Authentication is true when the buyer's 3-D Secure check failed (the answer to a
	// challenge), false when the processor declined the charge itself.
	Authentication bool
	Amount         int64
	Currency       string
	Method         PaymentMethodKind
	// At is the scope's time of the charge (the test clock in test mode).
	At time.Time
}

// DeclinedCharges reads the declined charges of a scope for the dashboard, newest first.
type DeclinedCharges interface {
	// DeclinedCharges returns at most limit declines of scope (only payableID's when it is not
	// empty) and whether more exist.
	DeclinedCharges(ctx context.Context, scope core.Scope, payableID string, limit int) ([]DeclinedCharge, bool, error)
}
