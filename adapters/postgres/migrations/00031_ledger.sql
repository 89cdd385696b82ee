-- +goose Up
-- The balance ledger (D7, D16): append-only, double-entry, per merchant, environment and
-- currency. Nothing here is ever updated or deleted except the balance rows (the running sum
-- of the postings) and the release queue (the pending transactions still waiting).

-- Balance transactions (txn_…): one money movement each. net = amount − fee. A movement posts
-- once: one transaction per source object and type.
CREATE TABLE balance_transactions (
    seq          bigserial NOT NULL,
    id           text NOT NULL,
    merchant_id  text NOT NULL REFERENCES merchants (id),
    environment  text NOT NULL CHECK (environment IN ('live', 'test')),
    currency     text NOT NULL,
    type         text NOT NULL CHECK (type IN ('payment', 'fee', 'refund', 'fee_reversal', 'dispute',
                     'dispute_fee', 'dispute_reversal', 'payout')),
    amount       bigint NOT NULL,
    fee          bigint NOT NULL,
    net          bigint NOT NULL,
    source_id    text NOT NULL,
    payment_id   text,
    available_on timestamptz NOT NULL,
    created      timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    CHECK (net = amount - fee),
    CHECK (amount <> 0 OR fee <> 0)
);
CREATE UNIQUE INDEX balance_transactions_source ON balance_transactions (source_id, type, merchant_id, environment);
CREATE INDEX balance_transactions_list ON balance_transactions (merchant_id, environment, seq DESC) WHERE seq > 0;
CREATE INDEX balance_transactions_list_type ON balance_transactions (merchant_id, environment, type, seq DESC) WHERE seq > 0;
CREATE INDEX balance_transactions_list_payment ON balance_transactions (merchant_id, environment, payment_id, seq DESC)
    WHERE seq > 0 AND payment_id IS NOT NULL;
CREATE INDEX balance_transactions_list_source ON balance_transactions (merchant_id, environment, source_id, seq DESC) WHERE seq > 0;

-- Postings: amount (> 0) from source to destination account, in the transaction's currency.
-- kind: post (the transaction itself), release (pending → available at available_on), paid
-- (a payout's money leaving the payouts in transit).
CREATE TABLE ledger_postings (
    seq            bigserial NOT NULL,
    merchant_id    text NOT NULL REFERENCES merchants (id),
    environment    text NOT NULL CHECK (environment IN ('live', 'test')),
    currency       text NOT NULL,
    transaction_id text NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('post', 'release', 'paid')),
    source         text NOT NULL CHECK (source IN ('world', 'pending', 'available', 'fees', 'payouts')),
    destination    text NOT NULL CHECK (destination IN ('world', 'pending', 'available', 'fees', 'payouts')),
    amount         bigint NOT NULL CHECK (amount > 0),
    created        timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, seq),
    CHECK (source <> destination),
    FOREIGN KEY (merchant_id, environment, transaction_id) REFERENCES balance_transactions (merchant_id, environment, id)
);
CREATE INDEX ledger_postings_transaction ON ledger_postings (transaction_id, merchant_id, environment);

-- Balances: the sum of the postings of each account, changed once per unit of work.
CREATE TABLE ledger_balances (
    merchant_id text NOT NULL REFERENCES merchants (id),
    environment text NOT NULL CHECK (environment IN ('live', 'test')),
    currency    text NOT NULL,
    account     text NOT NULL CHECK (account IN ('world', 'pending', 'available', 'fees', 'payouts')),
    balance     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, environment, currency, account),
    CHECK (balance >= 0 OR account IN ('world', 'available'))
);

-- The release queue: pending transactions and when their funds become available. The sweep
-- claims due rows (FOR UPDATE SKIP LOCKED), posts pending → available and deletes them.
CREATE TABLE ledger_releases (
    merchant_id    text NOT NULL,
    environment    text NOT NULL,
    transaction_id text NOT NULL,
    currency       text NOT NULL,
    net            bigint NOT NULL,
    available_on   timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, transaction_id),
    FOREIGN KEY (merchant_id, environment, transaction_id) REFERENCES balance_transactions (merchant_id, environment, id)
);
-- Due order across scopes and within one (as payments_due): a key lookup never walks it.
CREATE INDEX ledger_releases_due ON ledger_releases (available_on, merchant_id, environment, transaction_id);

-- The payout mark: a scope whose available balance changed (by anything but a payout) since
-- its last payout run, with the earliest such change. Its next run is the first midnight (UTC,
-- on the scope's clock) after changed_at; the run deletes the mark.
CREATE TABLE ledger_payout_marks (
    merchant_id text NOT NULL,
    environment text NOT NULL,
    changed_at  timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment)
);
CREATE INDEX ledger_payout_marks_due ON ledger_payout_marks (changed_at, merchant_id, environment);

-- Which payout settles which balance transaction (written once, by the payout run).
CREATE TABLE balance_transaction_payouts (
    merchant_id    text NOT NULL,
    environment    text NOT NULL,
    transaction_id text NOT NULL,
    payout_id      text NOT NULL,
    PRIMARY KEY (merchant_id, environment, transaction_id),
    FOREIGN KEY (merchant_id, environment, transaction_id) REFERENCES balance_transactions (merchant_id, environment, id)
);
CREATE INDEX balance_transaction_payouts_payout ON balance_transaction_payouts (payout_id, merchant_id, environment);

ALTER TABLE ledger_payout_marks ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE balance_transaction_payouts ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE balance_transactions ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE ledger_postings ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE ledger_balances ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE ledger_releases ALTER COLUMN merchant_id SET STATISTICS 0;

-- Backfill: the payments that succeeded and the refunds that succeeded before this migration
-- post what they would have posted. A payment's funds are available at its available_at (two
-- days after the charge or the settlement); until the release sweep reaches that time they are
-- pending.
INSERT INTO balance_transactions (id, merchant_id, environment, currency, type, amount, fee, net, source_id,
    payment_id, available_on, created)
SELECT 'txn_' || replace(gen_random_uuid()::text, '-', ''), merchant_id, environment, currency, 'payment', amount,
    fee_service_charge_currency, amount - fee_service_charge_currency, id, id,
    greatest(coalesce(available_at, created + interval '48 hours'), succeeded), succeeded
FROM (SELECT p.*, CASE WHEN p.payment_method = 'sepa_debit' AND p.available_at IS NOT NULL
                       THEN p.available_at - interval '48 hours' ELSE p.created END AS succeeded
      FROM payments p WHERE p.status IN ('succeeded', 'partially_refunded', 'refunded', 'disputed')) s
ORDER BY succeeded, id;

INSERT INTO balance_transactions (id, merchant_id, environment, currency, type, amount, fee, net, source_id,
    payment_id, available_on, created)
SELECT 'txn_' || replace(gen_random_uuid()::text, '-', ''), r.merchant_id, r.environment, r.currency, t.type,
    t.amount, t.fee, t.amount - t.fee, r.id, r.payment_id, r.created, r.created
FROM refunds r
CROSS JOIN LATERAL (VALUES ('refund', -r.amount, 0::bigint), ('fee_reversal', 0::bigint, -r.fee_reversed_charge_currency)) t(type, amount, fee)
WHERE r.status = 'succeeded' AND (t.amount <> 0 OR t.fee <> 0)
ORDER BY r.created, r.id, t.type DESC;

INSERT INTO ledger_releases (merchant_id, environment, transaction_id, currency, net, available_on)
SELECT merchant_id, environment, id, currency, net, available_on FROM balance_transactions WHERE available_on > created;

INSERT INTO ledger_postings (merchant_id, environment, currency, transaction_id, kind, source, destination, amount, created)
SELECT b.merchant_id, b.environment, b.currency, b.id, 'post', x.source, x.destination, x.amount, b.created
FROM (SELECT t.*, CASE WHEN t.available_on > t.created THEN 'pending' ELSE 'available' END AS bucket
      FROM balance_transactions t) b
CROSS JOIN LATERAL (VALUES
    (CASE WHEN b.amount > 0 THEN 'world' ELSE b.bucket END, CASE WHEN b.amount > 0 THEN b.bucket ELSE 'world' END, abs(b.amount)),
    (CASE WHEN b.fee > 0 THEN b.bucket ELSE 'fees' END, CASE WHEN b.fee > 0 THEN 'fees' ELSE b.bucket END, abs(b.fee))
) x(source, destination, amount)
WHERE x.amount > 0
ORDER BY b.seq;

INSERT INTO ledger_balances (merchant_id, environment, currency, account, balance)
SELECT merchant_id, environment, currency, account, sum(delta)
FROM (SELECT merchant_id, environment, currency, source AS account, -amount AS delta FROM ledger_postings
      UNION ALL
      SELECT merchant_id, environment, currency, destination, amount FROM ledger_postings) d
GROUP BY merchant_id, environment, currency, account;

-- Every backfilled scope with an available or pending balance is marked for its next payout
-- run (the change: now).
INSERT INTO ledger_payout_marks (merchant_id, environment, changed_at)
SELECT DISTINCT merchant_id, environment, now() FROM balance_transactions;

-- +goose Down
DROP TABLE balance_transaction_payouts;
DROP TABLE ledger_payout_marks;
DROP TABLE ledger_releases;
DROP TABLE ledger_balances;
DROP TABLE ledger_postings;
DROP TABLE balance_transactions;
