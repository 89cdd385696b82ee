-- +goose Up
-- Request-path queries must not depend on planner statistics (issue 10, section 7).
--
-- Every tenant table is looked up by (merchant_id, environment, …) and also has list indexes
-- leading with (merchant_id, environment). When a merchant is new to the statistics (its rows
-- arrived after the last ANALYZE: a merchant importing its catalog), merchant_id's
-- most-common-values list says it has no rows, the planner estimates one row for "this
-- merchant's rows" whatever else the query says, and then prefers the narrowest index with the
-- fewest conditions: a price lookup by product, or even a lookup by primary key, walks the
-- merchant's list index and filters every row of the merchant (measured: creating prices fell
-- from ~1,667 to 170 req/s, p50 179 ms).
--
-- Without statistics on merchant_id the planner uses its fixed estimate for an equality
-- (0.5% of the rows), so "this merchant" is never believed empty, and the index that matches
-- the most columns of the query (the primary key, prices by product, …) is the cheapest in
-- every state the statistics can be in. Nothing is lost: a tenant's share of a table is not
-- something a plan should depend on.
--
-- SET STATISTICS 0 stops ANALYZE from collecting the column but keeps what it collected
-- before; the no-op type change drops those (PostgreSQL removes a column's statistics when
-- its type is altered; text to text rewrites neither the table nor its indexes).
--
-- It applies to every table with a merchant_id column, those of earlier migrations included;
-- a table added later gets the same two statements in its own migration
-- (TestTenantColumnsHaveNoStatistics checks).
-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.table_name
        FROM information_schema.columns c
        JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND c.column_name = 'merchant_id'
          AND c.data_type = 'text' AND tb.table_type = 'BASE TABLE'
        ORDER BY c.table_name
    LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN merchant_id SET STATISTICS 0', t);
        EXECUTE format('ALTER TABLE %I ALTER COLUMN merchant_id TYPE text', t);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.table_name
        FROM information_schema.columns c
        JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND c.column_name = 'merchant_id'
          AND c.data_type = 'text' AND tb.table_type = 'BASE TABLE'
    LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN merchant_id SET STATISTICS -1', t);
    END LOOP;
END
$$;
-- +goose StatementEnd
