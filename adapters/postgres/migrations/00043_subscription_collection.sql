-- +goose Up
-- A subscription's renewal invoice being collected: the open invoice the sweep charges
-- off-session (open_invoice), when it was made (renewed_at, the start of the dunning
-- schedule), when the sweep charges it next (next_charge), the failures so far, and, after a
-- hard decline, when the subscription goes unpaid (unpaid_at). due_at keeps covering them.
ALTER TABLE subscriptions
    ADD COLUMN open_invoice text        NOT NULL DEFAULT '',
    ADD COLUMN renewed_at   timestamptz,
    ADD COLUMN next_charge  timestamptz,
    ADD COLUMN failures     integer     NOT NULL DEFAULT 0,
    ADD COLUMN unpaid_at    timestamptz;

-- +goose Down
ALTER TABLE subscriptions
    DROP COLUMN open_invoice,
    DROP COLUMN renewed_at,
    DROP COLUMN next_charge,
    DROP COLUMN failures,
    DROP COLUMN unpaid_at;
