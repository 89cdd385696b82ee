-- +goose Up
-- Idempotency records are written by the same transaction as the change they describe, under a
-- transaction-scoped advisory lock on the key (D4): there are no in-flight claims any more.
-- Claims left by an older binary describe nothing that was committed with them: they go.
DELETE FROM idempotency_keys WHERE in_flight;
ALTER TABLE idempotency_keys DROP COLUMN in_flight,
    ALTER COLUMN status SET NOT NULL,
    ALTER COLUMN content_type SET NOT NULL,
    ALTER COLUMN body SET NOT NULL;

-- +goose Down
ALTER TABLE idempotency_keys ADD COLUMN in_flight boolean NOT NULL DEFAULT false,
    ALTER COLUMN status DROP NOT NULL,
    ALTER COLUMN content_type DROP NOT NULL,
    ALTER COLUMN body DROP NOT NULL;
ALTER TABLE idempotency_keys ALTER COLUMN in_flight DROP DEFAULT;
