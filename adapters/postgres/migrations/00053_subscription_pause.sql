-- +goose Up
-- A paused subscription's pause (pause_collection): NULL when it is not paused, else
-- {"resumes_at": <RFC 3339 time or null>}. due_at covers the resumption.
ALTER TABLE subscriptions ADD COLUMN pause_collection jsonb;

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN pause_collection;
