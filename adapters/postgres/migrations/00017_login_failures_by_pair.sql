-- +goose Up
-- Sign-in throttling counts failures per (e-mail, client address) pair, per address and per
-- e-mail (identity.ThrottlePolicy), so one row now holds both: the e-mail that failed and the
-- address it failed from. Rows of the old shape keep counting for what they held (an 'email'
-- row for the e-mail, an 'ip' row for the address) until they leave the window.
CREATE TABLE login_failures_by_pair (
    email    text NOT NULL,
    address  text NOT NULL,
    at       timestamptz NOT NULL
);
INSERT INTO login_failures_by_pair (email, address, at)
SELECT CASE kind WHEN 'email' THEN subject ELSE '' END,
       CASE kind WHEN 'ip' THEN subject ELSE '' END, at
FROM login_failures;
DROP TABLE login_failures;
ALTER TABLE login_failures_by_pair RENAME TO login_failures;
CREATE INDEX login_failures_email ON login_failures (email, at);
CREATE INDEX login_failures_address ON login_failures (address, at);
CREATE INDEX login_failures_at ON login_failures (at);

-- +goose Down
CREATE TABLE login_failures_by_kind (
    kind     text NOT NULL CHECK (kind IN ('email', 'ip')),
    subject  text NOT NULL,
    at       timestamptz NOT NULL
);
INSERT INTO login_failures_by_kind (kind, subject, at)
SELECT 'email', email, at FROM login_failures WHERE email <> ''
UNION ALL
SELECT 'ip', address, at FROM login_failures WHERE address <> '';
DROP TABLE login_failures;
ALTER TABLE login_failures_by_kind RENAME TO login_failures;
CREATE INDEX login_failures_subject ON login_failures (kind, subject, at);
CREATE INDEX login_failures_at ON login_failures (at);
