-- +goose Up
-- Every event names the object it is about (data.object.id; core.Event.ObjectID), so that the
-- events about one payment or session (the dashboard's payment detail) are an index lookup
-- instead of a scan of every event of the merchant's environment. Events whose payload names
-- no object (a declined charge) keep NULL.
ALTER TABLE events ADD COLUMN object_id text;
UPDATE events SET object_id = data->>'id' WHERE object_id IS NULL;
CREATE INDEX events_object ON events (merchant_id, environment, object_id, seq DESC);

-- The mail outbox becomes a generic mail queue: a kind and a subject id (core.Mail). Which
-- kinds exist, and what each message says, is the business of the composer each module
-- registers for its kind (payments: receipt, whose subject is a payment); the queue keeps at
-- most one mail of a kind per subject.
ALTER TABLE mail_outbox RENAME COLUMN payment_id TO subject_id;
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_merchant_id_environment_payment_id_fkey;
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check;
ALTER TABLE mail_outbox RENAME CONSTRAINT mail_outbox_merchant_id_environment_payment_id_kind_key
    TO mail_outbox_subject_kind;

-- +goose Down
ALTER TABLE mail_outbox RENAME CONSTRAINT mail_outbox_subject_kind
    TO mail_outbox_merchant_id_environment_payment_id_kind_key;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check CHECK (kind IN ('receipt'));
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_merchant_id_environment_payment_id_fkey
    FOREIGN KEY (merchant_id, environment, subject_id) REFERENCES payments (merchant_id, environment, id);
ALTER TABLE mail_outbox RENAME COLUMN subject_id TO payment_id;
DROP INDEX events_object;
ALTER TABLE events DROP COLUMN object_id;
