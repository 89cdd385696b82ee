-- +goose Up
-- One-off invoices (dashboard-created) and their gap-free numbers.
--
-- An invoice's lines are one JSON array: they are written and read with the invoice, never
-- on their own. Totals are not stored: they are computed from the lines, exactly.
CREATE TABLE invoices (
    seq               bigserial   NOT NULL,
    id                text        PRIMARY KEY,
    merchant_id       text        NOT NULL REFERENCES merchants (id),
    environment       text        NOT NULL CHECK (environment IN ('test', 'live')),
    status            text        NOT NULL CHECK (status IN ('draft', 'open', 'paid', 'void', 'uncollectible')),
    number            text,
    currency          text        NOT NULL,
    customer_name     text        NOT NULL,
    customer_email    text        NOT NULL,
    lines             jsonb       NOT NULL,
    days_until_due    integer     NOT NULL,
    memo              text,
    metadata          jsonb       NOT NULL DEFAULT '{}',
    public_token      text UNIQUE,
    issue_date        timestamptz,
    due_date          timestamptz,
    amount_paid       bigint      NOT NULL DEFAULT 0,
    payment_id        text,
    created           timestamptz NOT NULL,
    updated           timestamptz NOT NULL,
    finalized_at      timestamptz,
    paid_at           timestamptz,
    voided_at         timestamptz,
    uncollectible_at  timestamptz,
    -- The invoice's side of the charge protocol.
    charging          text        NOT NULL DEFAULT '',
    attempts          integer     NOT NULL DEFAULT 0,
    pending_action    jsonb,
    processing        text        NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX invoices_number ON invoices (merchant_id, environment, number) WHERE number IS NOT NULL;
CREATE INDEX invoices_list ON invoices (merchant_id, environment, seq DESC) WHERE seq > 0;
CREATE INDEX invoices_list_status ON invoices (merchant_id, environment, status, seq DESC) WHERE seq > 0;

-- The last sequence number of each merchant, environment and year. A send increments its row
-- and reads the number back in one statement, in the send's transaction: the row stays locked
-- until the send commits (the number is used) or rolls back (the number is given back), so
-- numbers are gap-free, and only sends of the same merchant, environment and year wait.
CREATE TABLE invoice_number_counters (
    merchant_id text    NOT NULL REFERENCES merchants (id),
    environment text    NOT NULL,
    year        integer NOT NULL,
    last        bigint  NOT NULL,
    PRIMARY KEY (merchant_id, environment, year)
);

-- Request-path lookups must not depend on planner statistics of the tenant column (as every
-- tenant table since migration 00018).
ALTER TABLE invoices ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE invoice_number_counters ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE invoice_number_counters;
DROP TABLE invoices;
