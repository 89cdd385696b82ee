-- +goose Up
-- A unit of work runs every statement where it is called, in its transaction: there is no
-- optimistic unit left whose one statement checks its own counts, so the function it called
-- (migration 00021) goes. Migration 00021 added nothing else.
DROP FUNCTION kassa_unit_abort(bigint[], boolean[]);

-- +goose Down
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
