-- +goose Up
-- The monthly recurring revenue over time. Kassa keeps each subscription's current state only,
-- so the history is taken as it happens: once a day, at 00:00 UTC of the merchant
-- environment's clock (the test clock in test mode), the MRR sweep records the recurring revenue
-- of that moment. A scope is marked when its first subscription is created; the mark holds the
-- next midnight to take and moves on by a day with each snapshot.
CREATE TABLE mrr_snapshot_marks (
    merchant_id text NOT NULL,
    environment text NOT NULL,
    next_at     timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment)
);
CREATE INDEX mrr_snapshot_marks_due ON mrr_snapshot_marks (next_at, merchant_id, environment);

-- One row per scope and UTC day that was taken (a day without a row has no data: it is before
-- the history starts, or the server was not running at that midnight).
CREATE TABLE mrr_snapshots (
    merchant_id text NOT NULL,
    environment text NOT NULL,
    day         date NOT NULL,
    taken_at    timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, day)
);

-- The day's recurring revenue per currency; a currency without a row on a taken day was 0.
CREATE TABLE mrr_snapshot_amounts (
    merchant_id text NOT NULL,
    environment text NOT NULL,
    day         date NOT NULL,
    currency    text NOT NULL,
    amount      bigint NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (merchant_id, environment, day, currency),
    FOREIGN KEY (merchant_id, environment, day) REFERENCES mrr_snapshots (merchant_id, environment, day)
);

ALTER TABLE mrr_snapshot_marks ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE mrr_snapshots ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE mrr_snapshot_amounts ALTER COLUMN merchant_id SET STATISTICS 0;

-- Every scope that has subscriptions today takes its first snapshot at the next midnight of its
-- clock. Earlier days stay without data: the past statuses and amounts are not kept, so they
-- could only be guessed.
INSERT INTO mrr_snapshot_marks (merchant_id, environment, next_at)
SELECT s.merchant_id, s.environment,
    (date_trunc('day', COALESCE(c.frozen_time, now()) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') + interval '1 day'
FROM (SELECT DISTINCT merchant_id, environment FROM subscriptions) s
LEFT JOIN test_clocks c ON c.merchant_id = s.merchant_id AND c.environment = s.environment;

-- +goose Down
DROP TABLE mrr_snapshot_amounts;
DROP TABLE mrr_snapshots;
DROP TABLE mrr_snapshot_marks;
