-- +goose Up
-- A merchant's invoicing settings: the prefix of its invoice numbers
-- (<PREFIX>-INV-<year>-<sequence>), 3 to 12 upper-case letters or digits. One row per merchant
-- that chose a prefix; a merchant without a row numbers with the default prefix made from its
-- name. The prefix is the merchant's, in both environments; the sequence stays per merchant,
-- environment and year (invoice_number_counters), so a new prefix continues the count.
CREATE TABLE invoice_settings (
    merchant_id     text PRIMARY KEY REFERENCES merchants(id),
    invoice_prefix  text NOT NULL CHECK (invoice_prefix ~ '^[A-Z0-9]{3,12}$'),
    updated         timestamptz NOT NULL
);
ALTER TABLE invoice_settings ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE invoice_settings;
