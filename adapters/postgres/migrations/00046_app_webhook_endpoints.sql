-- +goose Up
-- App webhook endpoints: registered per app by the operator, they receive the app events of
-- every merchant that installed the app (exactly the app catalog, only what the installation's
-- scopes may read). The secret is sealed as a merchant endpoint's (adapters/signing.Box, the
-- endpoint id as additional data).
CREATE TABLE app_webhook_endpoints (
    id              text PRIMARY KEY,
    app_id          text NOT NULL REFERENCES apps (id),
    seq             bigserial NOT NULL,
    url             text NOT NULL,
    enabled_events  text[] NOT NULL,
    description     text NOT NULL DEFAULT '',
    secret_sealed   bytea NOT NULL,
    created         timestamptz NOT NULL
);
CREATE INDEX app_webhook_endpoints_app ON app_webhook_endpoints (app_id, seq DESC);

-- Deliveries to an app endpoint use the merchant delivery machinery (worker, retries, attempt
-- log, redelivery) through one webhook_endpoints row per app endpoint and merchant environment
-- that receives its events: same id, same url, events and sealed secret, app_id and the
-- installation it delivers for set. The fan-out writes it the first time an event of the scope
-- goes to the app endpoint; it carries the endpoint's health (failures, 410 Gone) for that
-- merchant environment, and uninstalling disables it with its pending deliveries. Merchant
-- endpoint queries leave these rows out (app_id IS NULL).
ALTER TABLE webhook_endpoints
    ADD COLUMN app_id text,
    ADD COLUMN installation_id uuid,
    ADD CONSTRAINT webhook_endpoints_app CHECK ((app_id IS NULL) = (installation_id IS NULL));
-- An app endpoint's rows, to keep them in step with it (update, delete) and to uninstall.
CREATE INDEX webhook_endpoints_app_endpoint ON webhook_endpoints (id) WHERE app_id IS NOT NULL;
CREATE INDEX webhook_endpoints_installation ON webhook_endpoints (installation_id) WHERE installation_id IS NOT NULL;

-- The installation an app delivery is for (its envelope's installation); NULL for a merchant
-- delivery. The operator's log of an app's deliveries reads them by installation, newest first.
ALTER TABLE webhook_deliveries ADD COLUMN installation_id uuid;
CREATE INDEX webhook_deliveries_installation ON webhook_deliveries (installation_id, seq DESC)
    WHERE installation_id IS NOT NULL;
-- One app delivery by id (the operator's detail and redelivery name no merchant).
CREATE INDEX webhook_deliveries_app_id ON webhook_deliveries (id) WHERE installation_id IS NOT NULL;
-- The fan-out reads the active installations of a batch's merchants; the operator's log reads
-- the installations of an app.
CREATE INDEX app_installations_merchant_active ON app_installations (merchant_id) WHERE revoked_at IS NULL;
CREATE INDEX app_installations_app ON app_installations (app_id);

-- +goose Down
DROP INDEX app_installations_app;
DROP INDEX app_installations_merchant_active;
DROP INDEX webhook_deliveries_app_id;
DROP INDEX webhook_deliveries_installation;
DELETE FROM webhook_deliveries WHERE installation_id IS NOT NULL;
ALTER TABLE webhook_deliveries DROP COLUMN installation_id;
DELETE FROM webhook_endpoints WHERE app_id IS NOT NULL;
DROP INDEX webhook_endpoints_installation;
DROP INDEX webhook_endpoints_app_endpoint;
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_app,
    DROP COLUMN installation_id, DROP COLUMN app_id;
DROP TABLE app_webhook_endpoints;
