-- +goose Up
-- A subscription's invoices name it; one-off invoices keep null.
ALTER TABLE invoices ADD COLUMN subscription_id text;

-- +goose Down
ALTER TABLE invoices DROP COLUMN subscription_id;
