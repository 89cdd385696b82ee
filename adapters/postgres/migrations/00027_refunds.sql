-- +goose Up
-- Refunds (re_…) of payments. A refund is recorded pending before the processor is called
-- (started_at, wall clock: the sweep resolves one left pending), and becomes succeeded or
-- failed once the processor's answer is applied, in the unit of work that updates the payment.
-- fee_reversed_* are the parts of the payment's fee the refund gives back (pro rata, on the
-- running total, so the parts of all refunds of a payment sum to its fee).
CREATE TABLE refunds (
    seq                          bigserial NOT NULL,
    id                           text NOT NULL,
    merchant_id                  text NOT NULL REFERENCES merchants (id),
    environment                  text NOT NULL CHECK (environment IN ('live', 'test')),
    payment_id                   text NOT NULL,
    amount                       bigint NOT NULL CHECK (amount > 0),
    currency                     text NOT NULL,
    reason                       text NOT NULL CHECK (reason IN ('requested_by_customer', 'duplicate', 'fraudulent')),
    status                       text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    fee_reversed_service_eur     bigint NOT NULL DEFAULT 0,
    fee_reversed_psp_eur         bigint NOT NULL DEFAULT 0,
    fee_reversed_charge_currency bigint NOT NULL DEFAULT 0,
    processor_ref                text,
    failure_code                 text,
    failure_message              text,
    created                      timestamptz NOT NULL,
    started_at                   timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, payment_id) REFERENCES payments (merchant_id, environment, id)
);
CREATE INDEX refunds_scope ON refunds (merchant_id, environment, seq DESC) WHERE seq > 0;
CREATE INDEX refunds_payment ON refunds (merchant_id, environment, payment_id, seq DESC) WHERE seq > 0;
CREATE INDEX refunds_pending ON refunds (started_at) WHERE status = 'pending';

-- The sandbox processor's memory of its refunds, as sandbox_charges is of its charges.
CREATE TABLE sandbox_refunds (
    merchant_id     text NOT NULL,
    environment     text NOT NULL,
    idempotency_key text NOT NULL,
    result          jsonb NOT NULL,
    created         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment, idempotency_key)
);

-- Request-path lookups must not depend on planner statistics of the tenant column (as every
-- tenant table since migration 00018).
ALTER TABLE refunds ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE sandbox_refunds ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE sandbox_refunds;
DROP TABLE refunds;
