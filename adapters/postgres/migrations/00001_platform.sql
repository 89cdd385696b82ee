-- +goose Up
-- Platform tables: merchants, API keys, dashboard users, idempotency records, the events outbox and the sandbox
-- test clocks. Every tenant-owned table carries merchant_id and environment (architecture:
-- Scale beyond one machine); money is bigint minor units; time is timestamptz.

CREATE TABLE merchants (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    country     text NOT NULL,
    email       text NOT NULL,
    onboarded   boolean NOT NULL DEFAULT false,
    created     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id            text PRIMARY KEY,
    merchant_id   text NOT NULL REFERENCES merchants(id),
    environment   text NOT NULL CHECK (environment IN ('test', 'live')),
    name          text NOT NULL,
    secret_hash   bytea NOT NULL UNIQUE,      -- SHA-256 of the whole secret; the secret itself is never stored
    display       text NOT NULL,              -- e.g. sk_test_…abcd, safe to show
    created       timestamptz NOT NULL DEFAULT now(),
    last_used     timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, environment, created DESC);

-- Dashboard users (D1 owner_password). password_hash is an argon2id PHC string.
CREATE TABLE users (
    id            text PRIMARY KEY,
    merchant_id   text NOT NULL REFERENCES merchants(id),
    email         text NOT NULL,
    password_hash text NOT NULL,
    created       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_merchant_email ON users (merchant_id, lower(email));

CREATE TABLE idempotency_keys (
    merchant_id   text NOT NULL,
    environment   text NOT NULL,
    method        text NOT NULL,
    path          text NOT NULL,
    key           text NOT NULL,
    request_hash  bytea NOT NULL,
    in_flight     boolean NOT NULL,
    status        integer,
    content_type  text,
    body          bytea,
    created       timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, method, path, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created);

-- The events outbox (D10 envelope). Delivery state comes with the webhook issue.
CREATE TABLE events (
    id            text NOT NULL,
    merchant_id   text NOT NULL,
    environment   text NOT NULL,
    type          text NOT NULL,
    created       timestamptz NOT NULL,
    seq           bigserial NOT NULL,
    data          jsonb NOT NULL,
    PRIMARY KEY (merchant_id, environment, id)  -- tenant-leading, as every tenant table
);
CREATE INDEX events_scope ON events (merchant_id, environment, seq DESC);

-- One sandbox clock per merchant test environment (D12); absent row = real time.
CREATE TABLE test_clocks (
    merchant_id   text NOT NULL REFERENCES merchants(id),
    environment   text NOT NULL DEFAULT 'test' CHECK (environment = 'test'),
    frozen_time   timestamptz,
    PRIMARY KEY (merchant_id, environment)
);

-- +goose Down
DROP TABLE test_clocks;
DROP TABLE events;
DROP TABLE idempotency_keys;
DROP TABLE users;
DROP TABLE api_keys;
DROP TABLE merchants;
