-- +goose Up
-- A checkout session in subscription mode names the subscription its completion started.
ALTER TABLE checkout_sessions ADD COLUMN subscription_id text;

-- +goose Down
ALTER TABLE checkout_sessions DROP COLUMN subscription_id;
