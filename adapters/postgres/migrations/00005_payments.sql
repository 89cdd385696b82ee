-- +goose Up
-- Payments (interface 2.2, 3.2; D6, D7, D9): created when a checkout session completes, in the
-- same transaction as the session's change and its events.

-- The primary key leads with the tenant (see 00002_catalog.sql for why).
CREATE TABLE payments (
    id                          text NOT NULL,
    merchant_id                 text NOT NULL REFERENCES merchants(id),
    environment                 text NOT NULL CHECK (environment IN ('test', 'live')),
    seq                         bigserial NOT NULL,
    -- Exactly one of session_id and invoice_id (invoices come later, without a foreign key yet).
    session_id                  text,
    invoice_id                  text,
    amount                      bigint NOT NULL CHECK (amount > 0),
    amount_refunded             bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
    currency                    text NOT NULL,
    status                      text NOT NULL CHECK (status IN
                                    ('processing', 'succeeded', 'failed', 'partially_refunded', 'refunded', 'disputed')),
    -- The state an open dispute returns to when won (D9); NULL when no dispute is open.
    previous_status             text CHECK (previous_status IN ('succeeded', 'partially_refunded')),
    dispute_lost                boolean NOT NULL DEFAULT false,
    payment_method              text NOT NULL CHECK (payment_method IN ('card', 'sepa_debit')),
    -- D6: of a card only brand, last4, country, funding and expiry are ever stored.
    card_brand                  text,
    card_last4                  text,
    card_country                text,
    card_funding                text,
    card_exp_month              smallint,
    card_exp_year               smallint,
    sepa_country                text,
    sepa_last4                  text,
    -- The fee locked at payment time (D7): EUR cents, and the charge currency's minor units at
    -- the ECB rate published on fee_rate_date.
    fee_service_eur             bigint NOT NULL CHECK (fee_service_eur >= 0),
    fee_psp_eur                 bigint NOT NULL CHECK (fee_psp_eur >= 0),
    fee_service_charge_currency bigint NOT NULL CHECK (fee_service_charge_currency >= 0),
    fee_currency                text NOT NULL,
    fee_rate_date               date NOT NULL,
    customer_name               text NOT NULL,
    customer_email              text NOT NULL,
    reference                   text,
    metadata                    jsonb NOT NULL DEFAULT '{}',
    failure_code                text,
    failure_message             text,
    -- The processor's id of the charge and, for a processing charge, when it settles.
    processor_ref               text NOT NULL,
    settles_at                  timestamptz,
    created                     timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    CHECK ((session_id IS NULL) <> (invoice_id IS NULL)),
    CHECK ((payment_method = 'card') = (card_brand IS NOT NULL)),
    FOREIGN KEY (merchant_id, environment, session_id)
        REFERENCES checkout_sessions (merchant_id, environment, id)
);

-- A session has at most one payment; this is also the lookup of a session's payment.
CREATE UNIQUE INDEX payments_session ON payments (merchant_id, environment, session_id)
    WHERE session_id IS NOT NULL;
-- Lists: newest first within one merchant environment.
CREATE INDEX payments_scope ON payments (merchant_id, environment, seq DESC);
-- The future settlement sweep: processing payments by settlement time.
CREATE INDEX payments_settling ON payments (settles_at) WHERE status = 'processing';

-- +goose Down
DROP TABLE payments;
