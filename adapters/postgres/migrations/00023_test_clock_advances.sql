-- +goose Up
-- A test clock advance is recorded, not leased (issue 15).
--
-- 00015 claimed a clock for a five-minute lease. A process killed during an advance left the
-- clock claimed until the lease ran out: the next advance waited for it, and the work done so
-- far stayed half done. Now the advance itself is recorded: advance_to is the time the clock
-- is moving to, and advance_owner the process running it (the id of its presence: an advisory
-- lock that process holds on a connection of its own for as long as it lives; see
-- adapters/postgres/presence.go). An advance whose process is gone is taken over at once, by
-- the next advance to the same time or by the background resumer of any process, and runs to
-- its end; frozen_time moves to advance_to only when every due effect has happened.
ALTER TABLE test_clocks DROP CONSTRAINT test_clocks_advance_claim,
    DROP COLUMN advance_claim, DROP COLUMN advance_lease_until;
ALTER TABLE test_clocks
    ADD COLUMN advance_to    timestamptz,
    ADD COLUMN advance_owner integer,
    ADD CONSTRAINT test_clocks_advance_owner CHECK (advance_owner IS NULL OR advance_to IS NOT NULL);
-- The resumer's look-up of advances in progress (few rows: an index that needs no statistics).
CREATE INDEX test_clocks_advancing ON test_clocks (advance_to) WHERE advance_to IS NOT NULL;

-- Lookups that do not depend on planner statistics (issue 15).
--
-- On a table never analysed (autovacuum off, or before its first ANALYZE) every condition
-- "merchant_id = … AND environment = …" is estimated at one row, on any index that leads with
-- those two columns; PostgreSQL then takes the narrowest such index and filters the rest, so a
-- lookup of one session by id walked checkout_sessions_scope over every session of the
-- merchant (41–62 ms at 12,000 sessions; an expiry sweep, one lookup per session, became
-- quadratic). The list indexes become partial on a condition that holds for every row
-- (seq > 0, seq being a bigserial) and that only the list queries state
-- (postgres.ListPredicate): a lookup cannot use them at all, and takes the primary key whatever
-- the statistics say. adapters/postgres/planner_test.go checks the primary-key lookup of every
-- table and the list plans on never-analysed tables.
DROP INDEX checkout_sessions_scope;
CREATE INDEX checkout_sessions_scope ON checkout_sessions (merchant_id, environment, seq DESC) WHERE seq > 0;
DROP INDEX payments_scope;
CREATE INDEX payments_scope ON payments (merchant_id, environment, seq DESC) WHERE seq > 0;
DROP INDEX disputes_scope;
CREATE INDEX disputes_scope ON disputes (merchant_id, environment, seq DESC) WHERE seq > 0;
DROP INDEX events_scope;
CREATE INDEX events_scope ON events (merchant_id, environment, seq DESC) WHERE seq > 0;
DROP INDEX events_object;
CREATE INDEX events_object ON events (merchant_id, environment, object_id, seq DESC) WHERE seq > 0;
DROP INDEX mailbox_messages_scope;
CREATE INDEX mailbox_messages_scope ON mailbox_messages (merchant_id, environment, seq DESC) WHERE seq > 0;
DROP INDEX products_scope;
CREATE INDEX products_scope ON products (merchant_id, environment, seq DESC) WHERE seq > 0;
DROP INDEX products_scope_active;
CREATE INDEX products_scope_active ON products (merchant_id, environment, active, seq DESC) WHERE seq > 0;
DROP INDEX webhook_endpoints_scope;
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints (merchant_id, environment, seq DESC) WHERE seq > 0;
-- prices_scope first: prices_product must stay the newer of the two (see 00019).
DROP INDEX prices_scope;
CREATE INDEX prices_scope ON prices (merchant_id, environment, seq DESC) WHERE seq > 0;
DROP INDEX prices_product;
CREATE INDEX prices_product ON prices (merchant_id, environment, product_id, seq DESC) WHERE seq > 0;
DROP INDEX prices_product_active;
CREATE INDEX prices_product_active ON prices (merchant_id, environment, product_id, active, seq DESC) WHERE seq > 0;
DROP INDEX webhook_deliveries_endpoint_log;
CREATE INDEX webhook_deliveries_endpoint_log ON webhook_deliveries (merchant_id, environment, endpoint_id, seq DESC) WHERE seq > 0;
DROP INDEX webhook_deliveries_event;
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (merchant_id, environment, event_id) WHERE seq > 0;
-- The disabling of an endpoint takes its pending deliveries (it used the endpoint's log).
CREATE INDEX webhook_deliveries_endpoint_pending ON webhook_deliveries (merchant_id, environment, endpoint_id)
    WHERE status = 'pending';
-- Unique keys other than the primary key lead with their own column, not the tenant: a lookup
-- by id cannot walk them either (ON CONFLICT finds a unique index by its set of columns, in
-- any order).
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_subject_kind,
    ADD CONSTRAINT mail_outbox_subject_kind UNIQUE (subject_id, kind, merchant_id, environment);
ALTER TABLE disputes DROP CONSTRAINT disputes_merchant_id_environment_payment_id_key,
    ADD CONSTRAINT disputes_payment UNIQUE (payment_id, merchant_id, environment);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_merchant_id_environment_endpoint_id_even_key,
    ADD CONSTRAINT webhook_deliveries_endpoint_event UNIQUE (endpoint_id, event_id, merchant_id, environment);
-- The claim of a scope's due sessions reads them in (expires_at, id) order: with id in the
-- index, the order comes from it and the claim needs no sort, in every statistics state.
DROP INDEX checkout_sessions_scope_due;
CREATE INDEX checkout_sessions_scope_due ON checkout_sessions (merchant_id, environment, expires_at, id)
    WHERE status = 'open';

-- +goose Down
DROP INDEX prices_scope;
CREATE INDEX prices_scope ON prices (merchant_id, environment, seq DESC);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_event,
    ADD CONSTRAINT webhook_deliveries_merchant_id_environment_endpoint_id_even_key UNIQUE (merchant_id, environment, endpoint_id, event_id);
ALTER TABLE disputes DROP CONSTRAINT disputes_payment,
    ADD CONSTRAINT disputes_merchant_id_environment_payment_id_key UNIQUE (merchant_id, environment, payment_id);
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_subject_kind,
    ADD CONSTRAINT mail_outbox_subject_kind UNIQUE (merchant_id, environment, subject_id, kind);
DROP INDEX webhook_deliveries_endpoint_pending;
DROP INDEX webhook_deliveries_event;
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (merchant_id, environment, event_id);
DROP INDEX webhook_deliveries_endpoint_log;
CREATE INDEX webhook_deliveries_endpoint_log ON webhook_deliveries (merchant_id, environment, endpoint_id, seq DESC);
DROP INDEX prices_product_active;
CREATE INDEX prices_product_active ON prices (merchant_id, environment, product_id, active, seq DESC);
DROP INDEX prices_product;
CREATE INDEX prices_product ON prices (merchant_id, environment, product_id, seq DESC);
DROP INDEX checkout_sessions_scope_due;
CREATE INDEX checkout_sessions_scope_due ON checkout_sessions (merchant_id, environment, expires_at)
    WHERE status = 'open';
DROP INDEX webhook_endpoints_scope;
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints (merchant_id, environment, seq DESC);
DROP INDEX products_scope_active;
CREATE INDEX products_scope_active ON products (merchant_id, environment, active, seq DESC);
DROP INDEX products_scope;
CREATE INDEX products_scope ON products (merchant_id, environment, seq DESC);
DROP INDEX mailbox_messages_scope;
CREATE INDEX mailbox_messages_scope ON mailbox_messages (merchant_id, environment, seq DESC);
DROP INDEX events_object;
CREATE INDEX events_object ON events (merchant_id, environment, object_id, seq DESC);
DROP INDEX events_scope;
CREATE INDEX events_scope ON events (merchant_id, environment, seq DESC);
DROP INDEX disputes_scope;
CREATE INDEX disputes_scope ON disputes (merchant_id, environment, seq DESC);
DROP INDEX payments_scope;
CREATE INDEX payments_scope ON payments (merchant_id, environment, seq DESC);
DROP INDEX checkout_sessions_scope;
CREATE INDEX checkout_sessions_scope ON checkout_sessions (merchant_id, environment, seq DESC);
DROP INDEX test_clocks_advancing;
ALTER TABLE test_clocks DROP CONSTRAINT test_clocks_advance_owner,
    DROP COLUMN advance_owner, DROP COLUMN advance_to;
ALTER TABLE test_clocks
    ADD COLUMN advance_claim       text,
    ADD COLUMN advance_lease_until timestamptz,
    ADD CONSTRAINT test_clocks_advance_claim CHECK ((advance_claim IS NULL) = (advance_lease_until IS NULL));
