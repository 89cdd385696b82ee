-- +goose Up
-- The development mailbox keeps the files sent with a message (an invoice's PDF), in order,
-- so that the dashboard's test mailbox offers them for download. The key leads with the
-- message's own id (msg_…, unique across tenants); every read also names the tenant.
CREATE TABLE mailbox_attachments (
    message_id    text NOT NULL,
    position      integer NOT NULL CHECK (position >= 0),
    merchant_id   text NOT NULL,
    environment   text NOT NULL CHECK (environment IN ('test', 'live')),
    filename      text NOT NULL,
    content_type  text NOT NULL,
    data          bytea NOT NULL,
    PRIMARY KEY (message_id, position),
    FOREIGN KEY (merchant_id, environment, message_id)
        REFERENCES mailbox_messages (merchant_id, environment, id) ON DELETE CASCADE
);
ALTER TABLE mailbox_attachments ALTER COLUMN merchant_id SET STATISTICS 0;

-- +goose Down
DROP TABLE mailbox_attachments;
