-- +goose Up
-- One charge protocol for every kind of payable.
--
-- A charge attempt and a payment name the kind of what they pay (checkout_session today, an
-- invoice next), so that the attempt sweeper and the settlement sweep find the payable's owner
-- by it instead of by the shape of an id. Uniqueness is per kind: one pending attempt per
-- payable, and one payment per payable_key, which is the payable's id for kinds with one
-- payment per payable (a session) and the attempt's idempotency key for kinds that may have
-- one per attempt (an invoice charged again after a failed debit).
--
-- started_at and resolved_at are the wall-clock times the module records (the attempt's age
-- decides when it is resolved by lookup); the database no longer fills them in.
ALTER TABLE charge_attempts
    ADD COLUMN payable_kind text,
    ADD COLUMN off_session  boolean NOT NULL DEFAULT false;
UPDATE charge_attempts SET payable_kind = 'checkout_session';
ALTER TABLE charge_attempts
    ALTER COLUMN payable_kind SET NOT NULL,
    ALTER COLUMN started_at DROP DEFAULT;
DROP INDEX charge_attempts_one_pending;
CREATE UNIQUE INDEX charge_attempts_one_pending ON charge_attempts (merchant_id, environment, payable_kind, reference)
    WHERE status = 'pending';

ALTER TABLE payments
    ADD COLUMN payable_kind text,
    ADD COLUMN payable_key  text;
UPDATE payments SET payable_kind = 'checkout_session', payable_key = session_id WHERE session_id IS NOT NULL;
UPDATE payments SET payable_kind = 'invoice', payable_key = invoice_id WHERE invoice_id IS NOT NULL;
ALTER TABLE payments
    ALTER COLUMN payable_kind SET NOT NULL,
    ALTER COLUMN payable_key SET NOT NULL;
-- It leads with its own column, so a never-analysed table's lookup of a payment by id never
-- takes it for the merchant's index (as 00023 did for the other unique keys).
CREATE UNIQUE INDEX payments_payable ON payments (payable_key, payable_kind, merchant_id, environment);
-- Still the lookup of a session's payment; its uniqueness is payments_payable's now.
DROP INDEX payments_session;
CREATE INDEX payments_session ON payments (merchant_id, environment, session_id) WHERE session_id IS NOT NULL;

-- +goose Down
DROP INDEX payments_session;
CREATE UNIQUE INDEX payments_session ON payments (merchant_id, environment, session_id) WHERE session_id IS NOT NULL;
DROP INDEX payments_payable;
ALTER TABLE payments DROP COLUMN payable_key, DROP COLUMN payable_kind;
DROP INDEX charge_attempts_one_pending;
CREATE UNIQUE INDEX charge_attempts_one_pending ON charge_attempts (merchant_id, environment, reference)
    WHERE status = 'pending';
ALTER TABLE charge_attempts ALTER COLUMN started_at SET DEFAULT now();
ALTER TABLE charge_attempts DROP COLUMN off_session, DROP COLUMN payable_kind;
