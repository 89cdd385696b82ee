-- +goose Up
-- The dashboard's customer page lists the invoices made out to, and the payments made with,
-- the customer's e-mail address (compared as the customer's key: trimmed, lower case).
CREATE INDEX invoices_customer_email ON invoices (merchant_id, environment, lower(btrim(customer_email)), seq DESC)
    WHERE seq > 0;
CREATE INDEX payments_customer_email ON payments (merchant_id, environment, lower(btrim(customer_email)), seq DESC)
    WHERE seq > 0;

-- +goose Down
DROP INDEX payments_customer_email;
DROP INDEX invoices_customer_email;
