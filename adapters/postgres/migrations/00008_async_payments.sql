-- +goose Up
-- Delayed outcomes of payments (interface 3.2; D6, D9, D12) and the receipt outbox:
--   * SEPA settlement: a processing payment gets its outcome at settles_at (00005);
--   * disputes: the processor announces one on a succeeded charge (the sandbox's dispute card),
--     and it opens at dispute_opens_at;
--   * receipts: a row in mail_outbox, written in the transaction that makes a payment
--     succeed, sent after commit by the receipt worker.

ALTER TABLE payments
    ADD COLUMN dispute_opens_at timestamptz,
    ADD COLUMN dispute_reason   text,
    -- The dispute opened on this payment (dp_…); set once, so a won dispute never reopens.
    ADD COLUMN dispute_id       text,
    ADD CONSTRAINT payments_dispute_notice CHECK ((dispute_opens_at IS NULL) = (dispute_reason IS NULL)),
    -- The next moment the payments sweep has work on this payment: its settlement while it
    -- is processing, its announced dispute while it can be disputed and none was opened.
    -- One column orders both kinds of work, so the sweep (and a test clock advance) runs them
    -- in time order with one index scan.
    ADD COLUMN due_at timestamptz GENERATED ALWAYS AS (
        CASE
            WHEN status = 'processing' THEN settles_at
            WHEN status IN ('succeeded', 'partially_refunded') AND dispute_id IS NULL THEN dispute_opens_at
        END) STORED;

-- The payments sweep: due work by time, across merchants (the background sweep) and within one
-- merchant environment (a test clock advance). The partial indexes keep to payments with work
-- left.
CREATE INDEX payments_due ON payments (due_at, merchant_id, environment, id) WHERE due_at IS NOT NULL;
CREATE INDEX payments_due_scope ON payments (merchant_id, environment, due_at) WHERE due_at IS NOT NULL;
-- Superseded by payments_due.
DROP INDEX payments_settling;

-- Disputes (D2 dp_, D9): opened by the payments sweep. A payment has at most one.
CREATE TABLE disputes (
    merchant_id     text NOT NULL REFERENCES merchants(id),
    environment     text NOT NULL CHECK (environment IN ('test', 'live')),
    id              text NOT NULL,
    seq             bigserial NOT NULL,
    payment_id      text NOT NULL,
    amount          bigint NOT NULL CHECK (amount > 0),
    currency        text NOT NULL,
    reason          text NOT NULL,
    status          text NOT NULL CHECK (status IN ('needs_response', 'under_review', 'won', 'lost')),
    evidence_due_by timestamptz NOT NULL,
    created         timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    UNIQUE (merchant_id, environment, payment_id),
    FOREIGN KEY (merchant_id, environment, payment_id) REFERENCES payments (merchant_id, environment, id)
);
CREATE INDEX disputes_scope ON disputes (merchant_id, environment, seq DESC);

-- E-mail to send after commit. A row is written in the same transaction as the change that
-- calls for the message, so a message exists exactly when its cause was committed; the
-- receipt worker claims due rows with FOR UPDATE SKIP LOCKED, sends them and records the
-- outcome. The message is rendered at send time from the payment, so no body is stored twice.
CREATE TABLE mail_outbox (
    merchant_id      text NOT NULL REFERENCES merchants(id),
    environment      text NOT NULL CHECK (environment IN ('test', 'live')),
    id               text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('receipt')),
    payment_id       text NOT NULL,
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dropped')),
    attempts         integer NOT NULL DEFAULT 0,
    -- When pending: the due time of the next attempt, or the end of a claim's lease.
    next_attempt_at  timestamptz NOT NULL,
    last_error       text,
    -- The scope's time when the cause happened (the receipt's date).
    created          timestamptz NOT NULL,
    completed_at     timestamptz,
    PRIMARY KEY (merchant_id, environment, id),
    -- At most one receipt per payment, whatever writes it.
    UNIQUE (merchant_id, environment, payment_id, kind),
    FOREIGN KEY (merchant_id, environment, payment_id) REFERENCES payments (merchant_id, environment, id)
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending';

-- +goose Down
DROP TABLE mail_outbox;
DROP TABLE disputes;
CREATE INDEX payments_settling ON payments (settles_at) WHERE status = 'processing';
DROP INDEX payments_due_scope;
DROP INDEX payments_due;
ALTER TABLE payments DROP COLUMN due_at, DROP CONSTRAINT payments_dispute_notice,
    DROP COLUMN dispute_id, DROP COLUMN dispute_reason, DROP COLUMN dispute_opens_at;
