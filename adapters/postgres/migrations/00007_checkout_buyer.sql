-- +goose Up
-- The buyer's side of checkout sessions (D6): confirmation bookkeeping kept on the session row,
-- so that it changes under the row lock and in the same transaction as the session and its
-- events.

ALTER TABLE checkout_sessions
    -- Charges started for the session; attempt n uses the processor idempotency key
    -- "<session id>:<n>".
    ADD COLUMN confirm_attempts        integer NOT NULL DEFAULT 0 CHECK (confirm_attempts >= 0),
    -- Declined charges: the card-testing guard refuses confirmations after ten.
    ADD COLUMN confirm_declines        integer NOT NULL DEFAULT 0 CHECK (confirm_declines >= 0),
    -- A charge waiting for the buyer (3-D Secure). D6: of the card only brand, last4,
    -- country, funding and expiry are stored, never the number.
    ADD COLUMN pending_processor_ref   text,
    ADD COLUMN pending_method          text CHECK (pending_method IN ('card', 'sepa_debit')),
    ADD COLUMN pending_action          text,
    ADD COLUMN pending_redirect_url    text,
    ADD COLUMN pending_card_brand      text,
    ADD COLUMN pending_card_last4      text,
    ADD COLUMN pending_card_country    text,
    ADD COLUMN pending_card_funding    text,
    ADD COLUMN pending_card_exp_month  smallint,
    ADD COLUMN pending_card_exp_year   smallint,
    ADD CONSTRAINT checkout_sessions_pending_whole
        CHECK ((pending_processor_ref IS NULL) = (pending_method IS NULL)
           AND (pending_processor_ref IS NULL) = (pending_action IS NULL));

-- +goose Down
ALTER TABLE checkout_sessions
    DROP CONSTRAINT checkout_sessions_pending_whole,
    DROP COLUMN confirm_attempts,
    DROP COLUMN confirm_declines,
    DROP COLUMN pending_processor_ref,
    DROP COLUMN pending_method,
    DROP COLUMN pending_action,
    DROP COLUMN pending_redirect_url,
    DROP COLUMN pending_card_brand,
    DROP COLUMN pending_card_last4,
    DROP COLUMN pending_card_country,
    DROP COLUMN pending_card_funding,
    DROP COLUMN pending_card_exp_month,
    DROP COLUMN pending_card_exp_year;
