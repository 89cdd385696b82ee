-- +goose Up
-- A test clock advance is recorded, not leased (issue 15).
--
-- 00015 claimed a clock for a five-minute lease. A process killed during an advance left the
-- clock claimed until the lease ran out: the next advance waited for it, and the work done so
-- far stayed half done. Now the advance itself is recorded: advance_to is the time the clock
-- is moving to, and advance_owner the process running it (the id of its presence: an advisory
-- lock that process holds on a connection of its own for as long as it lives; see
-- adapters/postgres/presence.go). An advance whose process is gone is taken over at once, by
-- the next advance to the same time or by the background resumer of any process, and runs to
-- its end; frozen_time moves to advance_to only when every due effect has happened.
ALTER TABLE test_clocks DROP CONSTRAINT test_clocks_advance_claim,
    DROP COLUMN advance_claim, DROP COLUMN advance_lease_until;
ALTER TABLE test_clocks
    ADD COLUMN advance_to    timestamptz,
    ADD COLUMN advance_owner integer,
    ADD CONSTRAINT test_clocks_advance_owner CHECK (advance_owner IS NULL OR advance_to IS NOT NULL);
-- The resumer's look-up of advances in progress (few rows: an index that needs no statistics).
CREATE INDEX test_clocks_advancing ON test_clocks (advance_to) WHERE advance_to IS NOT NULL;

-- +goose Down
DROP INDEX test_clocks_advancing;
ALTER TABLE test_clocks DROP CONSTRAINT test_clocks_advance_owner,
    DROP COLUMN advance_owner, DROP COLUMN advance_to;
ALTER TABLE test_clocks
    ADD COLUMN advance_claim       text,
    ADD COLUMN advance_lease_until timestamptz,
    ADD CONSTRAINT test_clocks_advance_claim CHECK ((advance_claim IS NULL) = (advance_lease_until IS NULL));
