-- +goose Up
-- Where the collection of a subscription's invoice stands after a failed charge: the dunning
-- stage (notice, warning, final, exhausted) and the next automatic attempt.
ALTER TABLE invoices
    ADD COLUMN dunning_stage        text,
    ADD COLUMN next_payment_attempt timestamptz;

-- +goose Down
ALTER TABLE invoices
    DROP COLUMN dunning_stage,
    DROP COLUMN next_payment_attempt;
