-- +goose Up
-- A unit of work runs every statement where it is called, in its transaction: there is no
-- optimistic unit left whose one statement checks its own counts, so the function it called
-- (migration 00021) goes. Migration 00021 added nothing else.
DROP FUNCTION kassa_unit_abort(bigint[], boolean[]);

-- Idempotency keys of the phased shape (operations that call out of the process): phase 1
-- records the key as started, with no response yet and an empty recovery point; each later
-- phase may move the recovery point; the last stores the response and clears the point. A
-- key is either started (recovery_point set, no response) or completed (a response, no
-- point).
ALTER TABLE idempotency_keys ALTER COLUMN status DROP NOT NULL,
    ALTER COLUMN content_type DROP NOT NULL,
    ALTER COLUMN body DROP NOT NULL,
    ADD COLUMN recovery_point text,
    ADD CONSTRAINT idempotency_keys_started_or_completed CHECK (
        (recovery_point IS NULL) = (status IS NOT NULL)
        AND (status IS NULL) = (content_type IS NULL)
        AND (status IS NULL) = (body IS NULL));

-- Keys are dated on the wall clock (they used to be dated on the scope's clock, which a
-- sandbox test clock may have moved far ahead): a record dated in the future is dated now.
UPDATE idempotency_keys SET created = now() WHERE created > now();

-- +goose Down
DELETE FROM idempotency_keys WHERE status IS NULL;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_started_or_completed,
    DROP COLUMN recovery_point,
    ALTER COLUMN status SET NOT NULL,
    ALTER COLUMN content_type SET NOT NULL,
    ALTER COLUMN body SET NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION kassa_unit_abort(counts bigint[], guarded boolean[]) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(counts, 1), 0) LOOP
        IF counts[i] <> 1 AND guarded[i] THEN
            RAISE EXCEPTION 'a row read by an optimistic unit of work changed before its commit'
                USING ERRCODE = 'KA001', DETAIL = counts::text;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'a write of an optimistic unit of work missed its row'
        USING ERRCODE = 'KA002', DETAIL = counts::text;
END
$$;
-- +goose StatementEnd
