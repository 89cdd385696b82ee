-- +goose Up
-- Merchants adjust a customer's balance by hand from the dashboard (reason 'adjustment', with
-- an optional note and no subscription), and the dashboard pages a customer's balance
-- transactions newest first: seq orders them as every list (rows already there are numbered
-- in the order they were made), and the list index is partial on seq > 0 like the others.
ALTER TABLE customer_balance_transactions DROP CONSTRAINT customer_balance_transactions_reason_check,
    ADD CONSTRAINT customer_balance_transactions_reason_check
        CHECK (reason IN ('proration_credit', 'proration_too_small', 'applied_to_invoice', 'adjustment')),
    ADD COLUMN description text NOT NULL DEFAULT '';
CREATE SEQUENCE customer_balance_transactions_seq_seq OWNED BY NONE;
ALTER TABLE customer_balance_transactions ADD COLUMN seq bigint;
UPDATE customer_balance_transactions t SET seq = o.n
    FROM (SELECT id, row_number() OVER (ORDER BY created, id) AS n FROM customer_balance_transactions) o WHERE o.id = t.id;
SELECT setval('customer_balance_transactions_seq_seq', COALESCE((SELECT max(seq) FROM customer_balance_transactions), 0) + 1, false);
ALTER TABLE customer_balance_transactions ALTER COLUMN seq SET DEFAULT nextval('customer_balance_transactions_seq_seq'),
    ALTER COLUMN seq SET NOT NULL;
ALTER SEQUENCE customer_balance_transactions_seq_seq OWNED BY customer_balance_transactions.seq;
CREATE INDEX customer_balance_transactions_list
    ON customer_balance_transactions (merchant_id, environment, customer_id, seq DESC) WHERE seq > 0;

-- +goose Down
DROP INDEX customer_balance_transactions_list;
ALTER TABLE customer_balance_transactions DROP COLUMN seq, DROP COLUMN description;
DELETE FROM customer_balance_transactions WHERE reason = 'adjustment';
ALTER TABLE customer_balance_transactions DROP CONSTRAINT customer_balance_transactions_reason_check,
    ADD CONSTRAINT customer_balance_transactions_reason_check
        CHECK (reason IN ('proration_credit', 'proration_too_small', 'applied_to_invoice'));
