-- +goose Up
-- Merchant dashboard sign-in: server-side sessions and failed sign-ins for throttling.

-- A signed-in dashboard session. The cookie carries a random token; only its SHA-256 is kept,
-- so a copy of this table cannot be replayed as cookies. A session ends at expires_at (7 days
-- after sign-in) or 12 hours after last_seen, whichever comes first, and at sign-out.
CREATE TABLE dashboard_sessions (
    token_hash   bytea PRIMARY KEY,
    merchant_id  text NOT NULL REFERENCES merchants(id),
    user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_token   text NOT NULL,
    created      timestamptz NOT NULL,
    last_seen    timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

-- One row per failed sign-in. kind 'email' rows hold the lower-cased e-mail, kind 'ip' rows
-- the client address; throttling counts the rows of the last window.
CREATE TABLE login_failures (
    kind     text NOT NULL CHECK (kind IN ('email', 'ip')),
    subject  text NOT NULL,
    at       timestamptz NOT NULL
);
CREATE INDEX login_failures_subject ON login_failures (kind, subject, at);
CREATE INDEX login_failures_at ON login_failures (at);

-- Sign-in looks users up by e-mail across merchants.
CREATE INDEX users_email ON users (lower(email), created);

-- +goose Down
DROP INDEX users_email;
DROP TABLE login_failures;
DROP TABLE dashboard_sessions;
