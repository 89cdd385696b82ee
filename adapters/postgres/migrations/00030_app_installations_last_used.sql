-- +goose Up
-- When an installation's token last authenticated an App API request (to the minute: written
-- at most once a minute per installation, outside any transaction). Null: never used.
ALTER TABLE app_installations ADD COLUMN last_used_at timestamptz;

-- +goose Down
ALTER TABLE app_installations DROP COLUMN last_used_at;
