-- +goose Up
-- Apps and their installations (the App API's tokens). An app is registered by the operator;
-- an installation puts it on one merchant with the scopes the merchant granted and one token
-- per environment, kept only as SHA-256 hashes. Uninstalling sets revoked_at; the row stays
-- for the record, and a later installation of the same app is a new row.
CREATE TABLE apps (
    id                 text PRIMARY KEY,
    name               text NOT NULL,
    client_id          text NOT NULL UNIQUE,
    client_secret_hash bytea NOT NULL,
    redirect_uris      text[] NOT NULL,
    scopes             text[] NOT NULL,
    reviewed           boolean NOT NULL,
    created            timestamptz NOT NULL
);

CREATE TABLE app_installations (
    id              uuid PRIMARY KEY,
    app_id          text NOT NULL REFERENCES apps (id),
    merchant_id     text NOT NULL REFERENCES merchants (id),
    scopes          text[] NOT NULL,
    live_token_hash bytea NOT NULL,
    test_token_hash bytea NOT NULL,
    created         timestamptz NOT NULL,
    revoked_at      timestamptz
);

-- Every App API request looks its installation up by the hash of its token.
CREATE UNIQUE INDEX app_installations_live_token ON app_installations (live_token_hash);
CREATE UNIQUE INDEX app_installations_test_token ON app_installations (test_token_hash);
-- At most one installation of an app per merchant is active.
CREATE UNIQUE INDEX app_installations_active ON app_installations (app_id, merchant_id) WHERE revoked_at IS NULL;
CREATE INDEX app_installations_merchant ON app_installations (merchant_id, created DESC);

-- Authorization codes of the OAuth install flow, kept as SHA-256 hashes: single use, ten
-- minutes, bound to the app, the redirect URI and the PKCE challenge. installation_id is what
-- the code issued, revoked when the code is presented again.
CREATE TABLE app_authorization_codes (
    code_hash       bytea PRIMARY KEY,
    app_id          text NOT NULL REFERENCES apps (id),
    merchant_id     text NOT NULL REFERENCES merchants (id),
    redirect_uri    text NOT NULL,
    scopes          text[] NOT NULL,
    code_challenge  text NOT NULL,
    created         timestamptz NOT NULL,
    expires         timestamptz NOT NULL,
    used_at         timestamptz,
    installation_id uuid REFERENCES app_installations (id)
);

-- Request-path lookups must not depend on planner statistics of the tenant column (as every
-- tenant table since migration 00018).
ALTER TABLE app_installations ALTER COLUMN merchant_id SET STATISTICS 0;
ALTER TABLE app_authorization_codes ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE app_authorization_codes;
DROP TABLE app_installations;
DROP TABLE apps;
