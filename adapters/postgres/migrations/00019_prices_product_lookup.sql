-- +goose Up
-- The prices of a product must be found through prices_product in a database that has never
-- been analysed (a fresh install before autovacuum's first ANALYZE; issue 10, section 7).
--
-- Without statistics the planner estimates at most one row for "this merchant's prices" on
-- any index, so an index scan of prices_product (merchant, environment, product, seq DESC,
-- the product in its condition) and one of prices_scope (merchant, environment, seq DESC,
-- the product filtered row by row) cost exactly the same; PostgreSQL then keeps the path of
-- the index it considered first, which is the most recently created one. prices_scope was
-- created after prices_product, so the lookup walked and filtered every price of the merchant
-- (measured: create price on a fresh install fell with the size of the merchant's catalog).
-- Re-creating prices_product makes it the newer of the two; the lookup (catalogPricesOf) is a
-- join on the product ids in which each id is an equality on prices_product's columns in
-- its order. adapters/postgres/planner_test.go checks the plan on a never-analysed table, with
-- statistics that do not know the merchant, and analysed; a later migration that creates an
-- index on prices leading with (merchant_id, environment) must keep that test passing.
DROP INDEX prices_product;
CREATE INDEX prices_product ON prices (merchant_id, environment, product_id, seq DESC);

-- +goose Down
-- The same index as before; only its place among the table's indexes changed.
SELECT 1;
