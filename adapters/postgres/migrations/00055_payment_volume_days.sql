-- +goose Up
-- Daily volume totals of the App API's analytics summary: per merchant environment, UTC day of
-- a payment's creation and currency, the sums over its payments in the captured statuses
-- (payments.CapturedStatuses): amounts, refunded amounts, service fees in the charge currency
-- and their number. The payments module moves a day's row in the unit of work of every
-- payment write that changes what the payment counts (a new payment, a settlement, a refund,
-- a dispute; payments.VolumeRepository), so the summary reads a row per whole day of its
-- window instead of every payment (its partial edge days still read payments_volume).
-- A refund counts in the day of the payment it refunds, as the summary always counted it.
CREATE TABLE payment_volume_days (
    merchant_id text NOT NULL REFERENCES merchants (id),
    environment text NOT NULL CHECK (environment IN ('live', 'test')),
    day         date NOT NULL,
    currency    text NOT NULL,
    gross       bigint NOT NULL,
    refunded    bigint NOT NULL,
    fees        bigint NOT NULL,
    payments    bigint NOT NULL,
    PRIMARY KEY (merchant_id, environment, day, currency)
);
ALTER TABLE payment_volume_days ALTER COLUMN merchant_id SET STATISTICS 0;

-- The payments written so far. The lock holds writes to payments until the migration commits,
-- so that none is written between the sums and the first write that moves them.
LOCK TABLE payments IN SHARE MODE;
INSERT INTO payment_volume_days (merchant_id, environment, day, currency, gross, refunded, fees, payments)
SELECT merchant_id, environment, (created AT TIME ZONE 'UTC')::date, currency,
    sum(amount), sum(amount_refunded), sum(fee_service_charge_currency), count(*)
FROM payments
WHERE status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')
GROUP BY 1, 2, 3, 4;

-- +goose Down
DROP TABLE payment_volume_days;
