-- +goose Up
-- The dashboard's delivery log and test events (webhooks.Service ListDeliveries, GetDelivery,
-- Redeliver, SendTestEvent).

-- A per-table sequence for cursor paging of one endpoint's log (the shared pager pages by seq).
ALTER TABLE webhook_deliveries ADD COLUMN seq bigserial NOT NULL;
-- The event type, copied at fan-out, so the log lists without reading the outbox.
ALTER TABLE webhook_deliveries ADD COLUMN event_type text;
UPDATE webhook_deliveries d SET event_type = ev.type
    FROM events ev
    WHERE ev.merchant_id = d.merchant_id AND ev.environment = d.environment AND ev.id = d.event_id;
UPDATE webhook_deliveries SET event_type = '' WHERE event_type IS NULL;
ALTER TABLE webhook_deliveries ALTER COLUMN event_type SET NOT NULL;
-- A test event sent from the dashboard is not written to the events outbox (it reports no
-- state change, GET /v1/events must not list it, and no other endpoint may receive it): its
-- delivery carries it. NULL for every delivery of an outbox event.
ALTER TABLE webhook_deliveries
    ADD COLUMN test_event_created timestamptz,
    ADD COLUMN test_event_data jsonb,
    ADD CONSTRAINT webhook_deliveries_test_event CHECK ((test_event_created IS NULL) = (test_event_data IS NULL));
-- One endpoint's log, newest first; supersedes the index by created.
CREATE INDEX webhook_deliveries_endpoint_log ON webhook_deliveries (merchant_id, environment, endpoint_id, seq DESC);
DROP INDEX webhook_deliveries_endpoint;

-- +goose Down
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (merchant_id, environment, endpoint_id, created DESC);
DROP INDEX webhook_deliveries_endpoint_log;
DELETE FROM webhook_deliveries WHERE test_event_data IS NOT NULL;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_test_event;
ALTER TABLE webhook_deliveries DROP COLUMN test_event_data;
ALTER TABLE webhook_deliveries DROP COLUMN test_event_created;
ALTER TABLE webhook_deliveries DROP COLUMN event_type;
ALTER TABLE webhook_deliveries DROP COLUMN seq;
