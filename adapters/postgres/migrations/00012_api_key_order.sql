-- +goose Up
-- Keys are listed newest first. created has the API's one-second resolution, so two keys made
-- in the same second (a merchant's default key and the first one its owner creates) tied and
-- came back in id order, which is random. seq records the order of creation.
ALTER TABLE api_keys ADD COLUMN seq bigserial;
DROP INDEX api_keys_merchant;
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, environment, created DESC, seq DESC);

-- +goose Down
DROP INDEX api_keys_merchant;
ALTER TABLE api_keys DROP COLUMN seq;
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, environment, created DESC);
