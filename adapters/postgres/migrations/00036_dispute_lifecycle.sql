-- +goose Up
-- The dispute lifecycle: evidence saved and submitted by the merchant, the bank's decision
-- (won or lost), the dispute fee locked when the dispute opens, and the due time of the
-- dispute sweep.
--   * evidence: the merchant's text; saved without submitting it keeps needs_response;
--   * evidence_submitted_at: submission moves the dispute to under_review, and decides_at
--     (one day later in the sandbox) is when the bank decides;
--   * closed_at: when it was won or lost; past_due: lost with no evidence submitted in time;
--   * fee, fee_eur, fee_rate, fee_rate_date: 15.00 EUR converted to the charge currency at
--     the rate of the charge day (the rate locked with the payment's fee). NULL for disputes
--     opened before this migration, which kept no fee.
ALTER TABLE disputes
    ADD COLUMN evidence              text NOT NULL DEFAULT '',
    ADD COLUMN evidence_submitted_at timestamptz,
    ADD COLUMN decides_at            timestamptz,
    ADD COLUMN closed_at             timestamptz,
    ADD COLUMN past_due              boolean NOT NULL DEFAULT false,
    ADD COLUMN fee                   bigint CHECK (fee >= 0),
    ADD COLUMN fee_eur               bigint CHECK (fee_eur >= 0),
    ADD COLUMN fee_rate              text,
    ADD COLUMN fee_rate_date         timestamptz,
    ADD CONSTRAINT disputes_review CHECK (status <> 'under_review' OR (evidence_submitted_at IS NOT NULL AND decides_at IS NOT NULL)),
    ADD CONSTRAINT disputes_closed CHECK ((status IN ('won', 'lost')) = (closed_at IS NOT NULL)),
    -- The next moment the dispute sweep has work on this dispute: a dispute waiting for a
    -- response is lost at its evidence deadline, one under review is decided at decides_at.
    ADD COLUMN due_at timestamptz GENERATED ALWAYS AS (
        CASE
            WHEN status = 'needs_response' THEN evidence_due_by
            WHEN status = 'under_review' THEN decides_at
        END) STORED;

-- The dispute sweep: due work by time across merchants (the background sweep) and within one
-- merchant environment (a test clock advance); partial, so they keep to open disputes.
CREATE INDEX disputes_due ON disputes (due_at, merchant_id, environment, id) WHERE due_at IS NOT NULL;
CREATE INDEX disputes_due_scope ON disputes (merchant_id, environment, due_at) WHERE due_at IS NOT NULL;

ALTER TABLE disputes ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP INDEX disputes_due_scope;
DROP INDEX disputes_due;
ALTER TABLE disputes DROP COLUMN due_at, DROP CONSTRAINT disputes_closed, DROP CONSTRAINT disputes_review,
    DROP COLUMN fee_rate_date, DROP COLUMN fee_rate, DROP COLUMN fee_eur, DROP COLUMN fee,
    DROP COLUMN past_due, DROP COLUMN closed_at, DROP COLUMN decides_at, DROP COLUMN evidence_submitted_at,
    DROP COLUMN evidence;
