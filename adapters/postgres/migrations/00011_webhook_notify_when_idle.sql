-- +goose Up
-- The events trigger NOTIFYs only when the fan-out queue was empty. A transaction that has
-- sent a NOTIFY takes one database-wide lock at commit and holds it until its commit record is
-- flushed, so notifying transactions commit one after the other, each with its own WAL flush:
-- with a webhook endpoint every event-writing request queued there ("Lock: object" on COMMIT
-- in pg_stat_activity) and the API's rate fell to the rate of serial flushes. A worker that
-- finds the queue non-empty is awake already: it fans out until the queue is empty and then
-- polls again shortly (webhooks.Worker), so an event queued behind others is picked up
-- without a notification; the first event after a quiet spell wakes the workers as before.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhook_enqueue_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints e
               WHERE e.merchant_id = NEW.merchant_id AND e.environment = NEW.environment
                 AND e.status = 'enabled') THEN
        IF NOT EXISTS (SELECT 1 FROM webhook_fanout) THEN
            PERFORM pg_notify('kassa_webhooks', '');
        END IF;
        INSERT INTO webhook_fanout (merchant_id, environment, event_id, event_seq)
        VALUES (NEW.merchant_id, NEW.environment, NEW.id, NEW.seq);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhook_enqueue_event() RETURNS trigger LANGUAGE plpgsql AS $$
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
