-- +goose Up
-- The development mailbox keeps one message per queued mail. A mail worker that dies after
-- the mailbox kept its batch and before the queue marked the batch sent claims the batch again
-- when its lease ends and delivers it a second time; keyed by the queued mail's id (mob_…), the
-- second delivery keeps nothing new. Messages delivered outside the queue have no mail id.
ALTER TABLE mailbox_messages ADD COLUMN mail_id text;
CREATE UNIQUE INDEX mailbox_messages_mail_id ON mailbox_messages (merchant_id, environment, mail_id)
    WHERE mail_id IS NOT NULL;

-- +goose Down
DROP INDEX mailbox_messages_mail_id;
ALTER TABLE mailbox_messages DROP COLUMN mail_id;
