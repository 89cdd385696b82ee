-- +goose Up
-- A payment method being saved for a subscription that waits for the customer's 3-D Secure
-- challenge: the processor's setup (processor_ref) and customer (customer_ref), and the
-- invoice the method is saved to pay ('' for a trial's first payment). One per subscription:
-- a new setup replaces it; answering the challenge deletes it in the unit of work that
-- records the method.
CREATE TABLE subscription_setups (
    merchant_id     text        NOT NULL,
    environment     text        NOT NULL,
    subscription_id text        NOT NULL,
    invoice_id      text        NOT NULL DEFAULT '',
    processor_ref   text        NOT NULL,
    customer_ref    text        NOT NULL DEFAULT '',
    created         timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, subscription_id)
);
-- Like every tenant column: no planner statistics, so a plan never depends on one merchant's
-- share of the rows.
ALTER TABLE subscription_setups ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE subscription_setups;
