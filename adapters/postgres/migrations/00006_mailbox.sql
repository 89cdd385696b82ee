-- +goose Up
-- The development mailbox: e-mail that Kassa would send (receipts, …) kept in the database
-- instead, when no SMTP server is configured, and shown in the dashboard's test mode. The
-- primary key leads with the tenant (merchant_id, environment), as every tenant table.

CREATE TABLE mailbox_messages (
    merchant_id   text NOT NULL REFERENCES merchants(id),
    environment   text NOT NULL CHECK (environment IN ('test', 'live')),
    id            text NOT NULL,               -- msg_…
    seq           bigserial NOT NULL,
    from_address  text NOT NULL,
    to_address    text NOT NULL,
    subject       text NOT NULL,
    text_body     text NOT NULL,
    html_body     text NOT NULL DEFAULT '',
    headers       jsonb NOT NULL DEFAULT '{}',
    created       timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id)
);
-- Lists: newest first within one merchant environment.
CREATE INDEX mailbox_messages_scope ON mailbox_messages (merchant_id, environment, seq DESC);

-- +goose Down
DROP TABLE mailbox_messages;
