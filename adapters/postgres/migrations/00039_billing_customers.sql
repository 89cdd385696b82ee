-- +goose Up
-- Recurring billing: customers and the payment methods saved for them.
--
-- A customer is found by e-mail within a merchant environment (email_key: trimmed, lower
-- case). A saved method keeps the processor's opaque reference and only what may be stored
-- of a card or bank account: type, brand, last four, country, funding, expiry; never a number.
CREATE TABLE customers (
    seq                    bigserial   NOT NULL,
    id                     text        PRIMARY KEY,
    merchant_id            text        NOT NULL REFERENCES merchants (id),
    environment            text        NOT NULL CHECK (environment IN ('test', 'live')),
    name                   text        NOT NULL,
    email                  text        NOT NULL,
    email_key              text        NOT NULL,
    processor_ref          text        NOT NULL DEFAULT '',
    default_payment_method text,
    created                timestamptz NOT NULL,
    updated                timestamptz NOT NULL
);
-- Unique keys lead with their own column, so a lookup by primary key never takes them.
CREATE UNIQUE INDEX customers_email ON customers (email_key, merchant_id, environment);
CREATE INDEX customers_list ON customers (merchant_id, environment, seq DESC) WHERE seq > 0;

CREATE TABLE customer_payment_methods (
    seq           bigserial   NOT NULL,
    id            text        PRIMARY KEY,
    merchant_id   text        NOT NULL REFERENCES merchants (id),
    environment   text        NOT NULL CHECK (environment IN ('test', 'live')),
    customer_id   text        NOT NULL REFERENCES customers (id),
    type          text        NOT NULL CHECK (type IN ('card', 'sepa_debit')),
    processor_ref text        NOT NULL,
    brand         text        NOT NULL DEFAULT '',
    last4         text        NOT NULL DEFAULT '',
    country       text        NOT NULL DEFAULT '',
    funding       text        NOT NULL DEFAULT '',
    exp_month     integer     NOT NULL DEFAULT 0,
    exp_year      integer     NOT NULL DEFAULT 0,
    created       timestamptz NOT NULL
);
CREATE UNIQUE INDEX customer_payment_methods_ref ON customer_payment_methods (processor_ref, merchant_id, environment);
CREATE INDEX customer_payment_methods_list ON customer_payment_methods (merchant_id, environment, customer_id, seq DESC) WHERE seq > 0;

-- Request-path lookups must not depend on planner statistics of the tenant column (as every
-- tenant table since migration 00018).
ALTER TABLE customers ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE customer_payment_methods ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE customer_payment_methods;
DROP TABLE customers;
