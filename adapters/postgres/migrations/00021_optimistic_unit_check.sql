-- +goose Up
-- The check of an optimistic unit of work (issue 10; adapters/postgres/optimistic.go).
--
-- An optimistic unit of work reads its rows without locking them and sends its writes as one
-- autocommit statement of data-modifying CTEs. Each update of a row it read is guarded by the
-- row's version (AND xmin::text = the version read), and each row it read but does not write
-- by a CTE that selects it FOR SHARE at that version. The statement commits when it returns,
-- so it checks its own counts before that: its final SELECT is
--
--   SELECT CASE WHEN <every count is 1> THEN 0 ELSE kassa_unit_abort(<counts>, <guarded>) END
--
-- and the function, evaluated only in the ELSE branch, raises: the statement fails and
-- nothing of it persists.
--   KA001  a guarded row changed since it was read (or is gone): a conflict, the unit of work
--          runs again with fresh reads, like a serialization failure;
--   KA002  an unguarded write that must write one row wrote none: an error.
-- The detail names the counts, in the order of the checks.
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

-- +goose Down
DROP FUNCTION kassa_unit_abort(bigint[], boolean[]);
