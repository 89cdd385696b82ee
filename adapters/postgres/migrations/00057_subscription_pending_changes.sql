-- +goose Up
-- A subscription's plan change scheduled for the period end (pending_update): NULL when none,
-- else {"price_id", "unit_amount", "quantity", "interval", "interval_count"}. And the proration
-- lines kept for its next renewal invoice (proration_behavior create_prorations): a JSON array
-- of {"description", "price_id", "quantity", "unit_amount"}, emptied by the UPDATE of the unit
-- of work that makes the renewal invoice carrying them.
ALTER TABLE subscriptions ADD COLUMN pending_update jsonb;
ALTER TABLE subscriptions ADD COLUMN pending_lines jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN pending_lines;
ALTER TABLE subscriptions DROP COLUMN pending_update;
