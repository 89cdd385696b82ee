-- +goose Up
-- Whether the invoice's processing debit was charged off-session (a renewal or its automatic
-- retry) rather than by the customer on the hosted invoice page: only the former is a dunning
-- attempt when it fails at settlement. Debits processing at upgrade time on a subscription's
-- invoice are counted as before (off-session).
ALTER TABLE invoices ADD COLUMN processing_off_session boolean NOT NULL DEFAULT false;
UPDATE invoices SET processing_off_session = true WHERE processing <> '' AND subscription_id IS NOT NULL;

-- A subscription's invoices, newest first (the dashboard's subscription detail pages them).
CREATE INDEX invoices_subscription ON invoices (merchant_id, environment, subscription_id, seq DESC)
    WHERE subscription_id IS NOT NULL;

-- +goose Down
DROP INDEX invoices_subscription;
ALTER TABLE invoices DROP COLUMN processing_off_session;
