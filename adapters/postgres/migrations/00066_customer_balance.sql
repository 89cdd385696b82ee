-- +goose Up
-- A customer's balance per currency is the sum of its balance transactions: a plan change's
-- net credit (negative) or a net charge below the minimum (positive), and what an invoice
-- took of it. Each is written in the unit of work of the change that caused it, under the
-- customer's row lock.
CREATE TABLE customer_balance_transactions (
    id              text        PRIMARY KEY,
    merchant_id     text        NOT NULL REFERENCES merchants (id),
    environment     text        NOT NULL CHECK (environment IN ('test', 'live')),
    customer_id     text        NOT NULL REFERENCES customers (id),
    currency        text        NOT NULL,
    amount          bigint      NOT NULL,
    reason          text        NOT NULL CHECK (reason IN ('proration_credit', 'proration_too_small', 'applied_to_invoice')),
    subscription_id text        NOT NULL,
    invoice_id      text        NOT NULL DEFAULT '',
    created         timestamptz NOT NULL
);
CREATE INDEX customer_balance_transactions_customer
    ON customer_balance_transactions (customer_id, currency, merchant_id, environment);
-- As every tenant table: the planner keeps no statistics of merchant_id.
ALTER TABLE customer_balance_transactions ALTER COLUMN merchant_id SET STATISTICS 0;

-- The customer's balance before and after a subscription's invoice took from it; the amount
-- due is the total + starting_balance − ending_balance.
ALTER TABLE invoices ADD COLUMN starting_balance bigint NOT NULL DEFAULT 0,
                     ADD COLUMN ending_balance   bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE invoices DROP COLUMN starting_balance, DROP COLUMN ending_balance;
DROP TABLE customer_balance_transactions;
