-- +goose Up
-- A test clock advance (D12) no longer holds the clock's row lock, and with it a connection,
-- while the due work runs: it claims the clock for a lease measured on the database's wall
-- clock, runs the work with no connection of its own, then sets frozen_time and releases the
-- claim. A second advance of the merchant waits for the claim to go (or its lease to run out).
ALTER TABLE test_clocks
    ADD COLUMN advance_claim       text,
    ADD COLUMN advance_lease_until timestamptz,
    ADD CONSTRAINT test_clocks_advance_claim CHECK ((advance_claim IS NULL) = (advance_lease_until IS NULL));

-- +goose Down
ALTER TABLE test_clocks DROP CONSTRAINT test_clocks_advance_claim,
    DROP COLUMN advance_lease_until, DROP COLUMN advance_claim;
