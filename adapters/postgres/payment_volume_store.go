package postgres

import (
	"context"

	"github.com/kassa-pay/kassa/modules/payments"
)

// volumeRepo is payments.VolumeRepository on a transaction: the daily volume totals
// (payment_volume_days, migration 00055).
type volumeRepo Tx

// paymentVolumeAddSQL adds a change to its day's row, creating it.
const paymentVolumeAddSQL = `INSERT INTO payment_volume_days AS d
		(merchant_id, environment, day, currency, gross, refunded, fees, payments)
	VALUES ($1, $2, $3::date, $4, $5, $6, $7, $8)
	ON CONFLICT (merchant_id, environment, day, currency) DO UPDATE SET
		gross = d.gross + EXCLUDED.gross, refunded = d.refunded + EXCLUDED.refunded,
		fees = d.fees + EXCLUDED.fees, payments = d.payments + EXCLUDED.payments`

// Add adds c to its scope's, day's and currency's totals (payments.VolumeRepository).
func (r volumeRepo) Add(ctx context.Context, c payments.VolumeChange) error {
	return r.q.exec(ctx, write{
		what: "payment_volume_days: add " + c.Day.UTC().Format("2006-01-02") + " " + string(c.Currency),
		sql:  paymentVolumeAddSQL,
		args: []any{c.Scope.MerchantID, string(c.Scope.Env), c.Day.UTC().Format("2006-01-02"), string(c.Currency),
			c.Gross, c.Refunded, c.Fees, c.Count},
		one: true,
	})
}
