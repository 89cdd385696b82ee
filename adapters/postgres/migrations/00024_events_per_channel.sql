-- +goose Up
-- Events are kept as what they are about, and each channel renders its payload when it reads
-- them (adapters/wire RenderEvent): the merchant channel (webhooks, GET /v1/events) and the
-- app channel (app events: ISO 8601, money as {amount, currency}) from the same row.
--
-- events.data held the merchant payload; it is the object at event time in its API form, so
-- it becomes events.object as it is, beside the kind of that object. Rows kept before this
-- migration render as before on the merchant channel (one exception, documented in
-- merchant.yaml: payment_intent.payment_failed has one shape, the PaymentIntent).
ALTER TABLE events RENAME COLUMN data TO object;
ALTER TABLE events ADD COLUMN object_kind text;
UPDATE events SET object_kind = CASE
    WHEN type LIKE 'checkout.session.%' THEN 'checkout.session'
    -- A charge that created no payment (a decline, a charge waiting on the shopper) was kept
    -- as a payment_intent object without an id; a settled debit that failed, as the payment.
    WHEN type LIKE 'payment_intent.%' AND object->>'object' = 'payment_intent' THEN 'charge'
    WHEN type LIKE 'payment_intent.%' THEN 'payment'
    WHEN type = 'charge.refunded' THEN 'refund'
    WHEN type LIKE 'charge.dispute.%' THEN 'dispute'
    WHEN type LIKE 'invoice.%' THEN 'invoice'
    WHEN type LIKE 'customer.subscription.%' THEN 'subscription'
    ELSE coalesce(object->>'object', 'unknown')
END;
ALTER TABLE events ALTER COLUMN object_kind SET NOT NULL;

-- Who receives an event is decided by the fan-out (webhooks.Worker: a subscriber is an
-- endpoint, later an app installation), not by a trigger reading webhook_endpoints: the
-- outbox writer queues every event a channel carries in the statement that writes it, and the
-- fan-out turns each into the deliveries of its subscribers, or into none. Queued events that
-- were not fanned out yet stay queued: no undelivered event is lost. The queue is ordered by
-- its own sequence (the writer cannot know events.seq in the statement that takes it).
DROP TRIGGER events_webhook_fanout ON events;
DROP FUNCTION webhook_enqueue_event();
ALTER TABLE webhook_fanout RENAME TO event_fanout;
ALTER TABLE event_fanout RENAME CONSTRAINT webhook_fanout_pkey TO event_fanout_pkey;
CREATE SEQUENCE event_fanout_seq;
ALTER TABLE event_fanout ADD COLUMN seq bigint;
UPDATE event_fanout SET seq = event_seq;
SELECT setval('event_fanout_seq', greatest(coalesce((SELECT max(seq) FROM event_fanout), 0), 1));
ALTER TABLE event_fanout ALTER COLUMN seq SET DEFAULT nextval('event_fanout_seq'),
    ALTER COLUMN seq SET NOT NULL;
ALTER SEQUENCE event_fanout_seq OWNED BY event_fanout.seq;
DROP INDEX webhook_fanout_order;
ALTER TABLE event_fanout DROP COLUMN event_seq;
CREATE INDEX event_fanout_order ON event_fanout (seq);

-- +goose Down
ALTER TABLE event_fanout ADD COLUMN event_seq bigint;
UPDATE event_fanout f SET event_seq = ev.seq FROM events ev
    WHERE ev.merchant_id = f.merchant_id AND ev.environment = f.environment AND ev.id = f.event_id;
DELETE FROM event_fanout WHERE event_seq IS NULL;
-- Without the trigger's filter, scopes without an enabled endpoint were queued too.
DELETE FROM event_fanout f WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e
    WHERE e.merchant_id = f.merchant_id AND e.environment = f.environment AND e.status = 'enabled');
ALTER TABLE event_fanout ALTER COLUMN event_seq SET NOT NULL;
DROP INDEX event_fanout_order;
ALTER TABLE event_fanout DROP COLUMN seq;
CREATE INDEX webhook_fanout_order ON event_fanout (event_seq);
ALTER TABLE event_fanout RENAME CONSTRAINT event_fanout_pkey TO webhook_fanout_pkey;
ALTER TABLE event_fanout RENAME TO webhook_fanout;
-- +goose StatementBegin
CREATE FUNCTION webhook_enqueue_event() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER events_webhook_fanout AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION webhook_enqueue_event();
ALTER TABLE events DROP COLUMN object_kind;
ALTER TABLE events RENAME COLUMN object TO data;
