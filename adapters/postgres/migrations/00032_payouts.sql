-- +goose Up
-- Payouts (po_…): the daily payout run's transfers of a currency's available balance. A payout
-- is recorded (with its balance transaction) before its rail is called; sent_at marks the
-- rail's acceptance (rail_ref its reference); it is paid on arrival_date.
CREATE TABLE payouts (
    seq            bigserial NOT NULL,
    id             text NOT NULL,
    merchant_id    text NOT NULL REFERENCES merchants (id),
    environment    text NOT NULL CHECK (environment IN ('live', 'test')),
    currency       text NOT NULL,
    amount         bigint NOT NULL CHECK (amount > 0),
    status         text NOT NULL CHECK (status IN ('pending', 'paid')),
    created        timestamptz NOT NULL,
    arrival_date   timestamptz NOT NULL,
    transaction_id text NOT NULL,
    rail_ref       text,
    sent_at        timestamptz,
    paid_at        timestamptz,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, transaction_id) REFERENCES balance_transactions (merchant_id, environment, id),
    CHECK ((rail_ref IS NULL) = (sent_at IS NULL)),
    CHECK ((status = 'paid') = (paid_at IS NOT NULL))
);
CREATE INDEX payouts_list ON payouts (merchant_id, environment, seq DESC) WHERE seq > 0;
CREATE INDEX payouts_arrival ON payouts (arrival_date, merchant_id, environment, id) WHERE status = 'pending';
CREATE INDEX payouts_unsent ON payouts (created, merchant_id, environment, id) WHERE sent_at IS NULL;
ALTER TABLE payouts ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE payouts;
