-- +goose Up
-- Merchant webhooks (D10): endpoints, the fan-out queue fed by the events outbox, one delivery
-- per event × subscribed endpoint, and every attempt. Primary keys lead with the tenant
-- (merchant_id, environment), as every tenant table.

CREATE TABLE webhook_endpoints (
    merchant_id                 text NOT NULL REFERENCES merchants(id),
    environment                 text NOT NULL CHECK (environment IN ('test', 'live')),
    id                          text NOT NULL,
    seq                         bigserial NOT NULL,
    url                         text NOT NULL,
    enabled_events              text[] NOT NULL,
    description                 text NOT NULL DEFAULT '',
    status                      text NOT NULL CHECK (status IN ('enabled', 'disabled')),
    disabled_reason             text,
    -- Signing secrets cannot be stored as a hash (every delivery needs them as HMAC keys). They
    -- are sealed with AES-256-GCM under KASSA_WEBHOOK_SECRET_KEY, with the endpoint id as
    -- additional data (adapters/signing.Box: a version byte, the nonce, the ciphertext);
    -- version 0 is clear text, written only when no key is configured (development).
    secret_sealed               bytea NOT NULL,
    -- The previous secret keeps signing for 24 h after a rotation.
    previous_secret_sealed      bytea,
    previous_secret_expires_at  timestamptz,
    -- Start of the current run of failed attempts; 5 days of it disable the endpoint.
    failing_since               timestamptz,
    created                     timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    CHECK ((status = 'enabled') = (disabled_reason IS NULL)),
    CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints (merchant_id, environment, seq DESC);

-- Events waiting to be fanned out into deliveries. A row is written by the trigger below in
-- the transaction that writes the event, so it exists exactly when the event was committed,
-- whatever order concurrent transactions commit in (a cursor over events.seq could skip an
-- event whose seq was taken before, but committed after, a larger one). The fan-out claims
-- rows with FOR UPDATE SKIP LOCKED and deletes them with the deliveries it creates.
CREATE TABLE webhook_fanout (
    merchant_id   text NOT NULL,
    environment   text NOT NULL,
    event_id      text NOT NULL,
    event_seq     bigint NOT NULL,
    PRIMARY KEY (merchant_id, environment, event_id)
);
CREATE INDEX webhook_fanout_order ON webhook_fanout (event_seq);

-- Only scopes with an enabled endpoint queue anything, so merchants without webhooks pay one
-- primary-key probe per event. The NOTIFY wakes the delivery workers (LISTEN kassa_webhooks);
-- they also poll, so a lost notification only delays.
-- +goose StatementBegin
CREATE FUNCTION webhook_enqueue_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints e
               WHERE e.merchant_id = NEW.merchant_id AND e.environment = NEW.environment
                 AND e.status = 'enabled') THEN
        INSERT INTO webhook_fanout (merchant_id, environment, event_id, event_seq)
        VALUES (NEW.merchant_id, NEW.environment, NEW.id, NEW.seq);
        PERFORM pg_notify('kassa_webhooks', '');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER events_webhook_fanout AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION webhook_enqueue_event();

CREATE TABLE webhook_deliveries (
    merchant_id      text NOT NULL,
    environment      text NOT NULL,
    id               text NOT NULL,
    endpoint_id      text NOT NULL,
    event_id         text NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'disabled')),
    attempts         integer NOT NULL DEFAULT 0,       -- attempt numbers handed out so far
    next_attempt_at  timestamptz,                      -- when pending: due time, or the end of a claim's lease
    created          timestamptz NOT NULL,
    last_attempt_at  timestamptz,
    completed_at     timestamptz,
    PRIMARY KEY (merchant_id, environment, id),
    UNIQUE (merchant_id, environment, endpoint_id, event_id),
    FOREIGN KEY (merchant_id, environment, endpoint_id)
        REFERENCES webhook_endpoints (merchant_id, environment, id) ON DELETE CASCADE,
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- The claim of due deliveries, across every scope.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- The dashboard: the deliveries of one event, and the recent deliveries of one endpoint.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (merchant_id, environment, event_id);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (merchant_id, environment, endpoint_id, created DESC);

CREATE TABLE webhook_attempts (
    merchant_id       text NOT NULL,
    environment       text NOT NULL,
    delivery_id       text NOT NULL,
    attempt           integer NOT NULL CHECK (attempt >= 1),  -- Service-Delivery-Attempt
    endpoint_id       text NOT NULL,
    event_id          text NOT NULL,
    started_at        timestamptz NOT NULL,
    latency_ms        integer NOT NULL,
    status_code       integer,                  -- NULL when no response came
    response_excerpt  text NOT NULL DEFAULT '', -- at most 4 KiB of the response body
    error             text,                     -- transport failure (timeout, refused address, …)
    PRIMARY KEY (merchant_id, environment, delivery_id, attempt),
    FOREIGN KEY (merchant_id, environment, delivery_id)
        REFERENCES webhook_deliveries (merchant_id, environment, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TRIGGER events_webhook_fanout ON events;
DROP FUNCTION webhook_enqueue_event();
DROP TABLE webhook_fanout;
DROP TABLE webhook_endpoints;
