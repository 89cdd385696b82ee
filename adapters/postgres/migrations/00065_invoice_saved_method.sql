-- +goose Up
-- The payment method the customer saved for the current charge of a subscription's invoice on
-- its hosted page: it becomes the subscription's default when that charge pays the invoice.
ALTER TABLE invoices ADD COLUMN saved_method text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE invoices DROP COLUMN saved_method;
