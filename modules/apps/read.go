package apps

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Volume is one currency's figures of the App API's analytics summary: over the payments
// created in a window whose money was taken, their amounts (Gross), refunded amounts
// (Refunded), Kassa's service fees in the charge currency (Fees) and their number.
type Volume struct {
	Currency core.Currency
	Gross    int64
	Refunded int64
	Fees     int64
	Count    int64
}

// Net is the volume the merchant keeps: gross less refunds and fees.
func (v Volume) Net() int64 { return v.Gross - v.Refunded - v.Fees }

// VolumeReader sums a scope's payments per currency for the analytics summary.
type VolumeReader interface {
	// Volumes returns, sorted by currency, the figures of the scope's payments created in
	// [from, to) in one of the captured statuses; a currency without such payments is left out.
	Volumes(ctx context.Context, scope core.Scope, from, to time.Time) ([]Volume, error)
}
