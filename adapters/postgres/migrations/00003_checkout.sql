-- +goose Up
-- Hosted checkout sessions (interface 2.1, 3.1, 4.1; D6).

-- The primary key leads with the tenant (see 00002_catalog.sql for why).
CREATE TABLE checkout_sessions (
    id                  text NOT NULL,
    merchant_id         text NOT NULL REFERENCES merchants(id),
    environment         text NOT NULL CHECK (environment IN ('test', 'live')),
    seq                 bigserial NOT NULL,
    checkout_mode       text NOT NULL CHECK (checkout_mode IN ('payment', 'subscription')),
    status              text NOT NULL CHECK (status IN ('open', 'complete', 'expired', 'canceled')),
    amount              bigint NOT NULL CHECK (amount >= 0),
    currency            text NOT NULL,
    -- The client secret is stored in clear, unlike API key secrets (stored as SHA-256 only):
    -- retrieve must return client_secret, checkout_url and embed_url (interface 2.1, as the
    -- widely used APIs return it on retrieve), so a hash alone cannot serve. The secret
    -- authorises only loading and paying this one session, is valid for 24 h or until the
    -- status changes (interface 5.2), and is readable only with the merchant's API key, which
    -- already grants far more. client_secret_hash (SHA-256) is what the hosted pages and the
    -- browser API look a session up by, in constant time, without matching on the secret.
    client_secret       text NOT NULL,
    client_secret_hash  bytea NOT NULL UNIQUE,
    checkout_url        text NOT NULL,
    embed_url           text NOT NULL,
    customer_name       text NOT NULL,
    customer_email      text NOT NULL,
    reference           text,
    description         text,
    success_url         text,
    cancel_url          text,
    line_items          jsonb NOT NULL DEFAULT '[]',
    metadata            jsonb NOT NULL DEFAULT '{}',
    cancellation_reason text,
    created             timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id)
);

-- Lists: newest first within one merchant environment.
CREATE INDEX checkout_sessions_scope ON checkout_sessions (merchant_id, environment, seq DESC);
-- The background sweep: only open sessions can become due.
CREATE INDEX checkout_sessions_due ON checkout_sessions (expires_at) WHERE status = 'open';
-- The sweep of one scope (test clock advance, lazy expiry on list).
CREATE INDEX checkout_sessions_scope_due ON checkout_sessions (merchant_id, environment, expires_at)
    WHERE status = 'open';

-- +goose Down
DROP TABLE checkout_sessions;
