-- +goose Up
-- A subscription's first payment (pi_…), which the customer's browser confirms with the
-- client secret, and whether its trial-ending notice has been given.
ALTER TABLE subscriptions ADD COLUMN payment_intent text;
ALTER TABLE subscriptions ADD COLUMN trial_notified boolean NOT NULL DEFAULT false;
-- The browser API finds the subscription by its first payment's id, in any scope (the client
-- secret is the credential); the key leads with its own column.
CREATE UNIQUE INDEX subscriptions_payment_intent ON subscriptions (payment_intent) WHERE payment_intent IS NOT NULL;

-- +goose Down
DROP INDEX subscriptions_payment_intent;
ALTER TABLE subscriptions DROP COLUMN trial_notified;
ALTER TABLE subscriptions DROP COLUMN payment_intent;
