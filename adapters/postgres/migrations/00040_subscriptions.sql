-- +goose Up
-- Subscriptions: a customer's recurring purchase of a catalog price.
--
-- due_at is the projection of billing.Subscription.DueAt: when the subscription's next change
-- falls due (an incomplete one's expiry, a pending cancellation's period end), null when none.
-- The sweep claims rows by it, earliest first.
CREATE TABLE subscriptions (
    seq                    bigserial   NOT NULL,
    id                     text        PRIMARY KEY,
    merchant_id            text        NOT NULL REFERENCES merchants (id),
    environment            text        NOT NULL CHECK (environment IN ('test', 'live')),
    status                 text        NOT NULL CHECK (status IN ('incomplete', 'incomplete_expired', 'trialing',
                                           'active', 'past_due', 'unpaid', 'canceled')),
    customer_id            text        NOT NULL REFERENCES customers (id),
    price_id               text        NOT NULL,
    quantity               bigint      NOT NULL,
    currency               text        NOT NULL,
    unit_amount            bigint      NOT NULL,
    interval               text        NOT NULL,
    interval_count         integer     NOT NULL,
    anchor                 timestamptz NOT NULL,
    period_start           timestamptz NOT NULL,
    period_end             timestamptz NOT NULL,
    trial_start            timestamptz,
    trial_end              timestamptz,
    latest_invoice         text,
    client_secret          text,
    default_payment_method jsonb,
    cancel_at_period_end   boolean     NOT NULL DEFAULT false,
    canceled_at            timestamptz,
    ended_at               timestamptz,
    metadata               jsonb       NOT NULL DEFAULT '{}',
    created                timestamptz NOT NULL,
    updated                timestamptz NOT NULL,
    due_at                 timestamptz
);
CREATE INDEX subscriptions_list ON subscriptions (merchant_id, environment, seq DESC) WHERE seq > 0;
CREATE INDEX subscriptions_list_status ON subscriptions (merchant_id, environment, status, seq DESC) WHERE seq > 0;
CREATE INDEX subscriptions_list_customer ON subscriptions (merchant_id, environment, customer_id, seq DESC) WHERE seq > 0;
CREATE INDEX subscriptions_list_price ON subscriptions (merchant_id, environment, price_id, seq DESC) WHERE seq > 0;
-- The sweep of one scope (a test clock advance), and of every scope (the background loop).
CREATE INDEX subscriptions_scope_due ON subscriptions (merchant_id, environment, due_at, id) WHERE due_at IS NOT NULL;
CREATE INDEX subscriptions_due ON subscriptions (due_at, id) WHERE due_at IS NOT NULL;

ALTER TABLE subscriptions ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE subscriptions;
