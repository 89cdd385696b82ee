-- +goose Up
-- A subscription canceled with create_prorations lines kept for its renewal puts their net on
-- the customer's balance: a credit as 'proration_credit' (as before), and now a charge too,
-- owed by the customer for the next invoice, as 'proration_charge_at_cancel'.
ALTER TABLE customer_balance_transactions DROP CONSTRAINT customer_balance_transactions_reason_check,
    ADD CONSTRAINT customer_balance_transactions_reason_check
        CHECK (reason IN ('proration_credit', 'proration_too_small', 'applied_to_invoice', 'adjustment',
            'proration_charge_at_cancel'));

-- +goose Down
DELETE FROM customer_balance_transactions WHERE reason = 'proration_charge_at_cancel';
ALTER TABLE customer_balance_transactions DROP CONSTRAINT customer_balance_transactions_reason_check,
    ADD CONSTRAINT customer_balance_transactions_reason_check
        CHECK (reason IN ('proration_credit', 'proration_too_small', 'applied_to_invoice', 'adjustment'));
