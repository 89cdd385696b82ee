package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
)

// CatalogStore implements catalog.Store on PostgreSQL. Every query filters by merchant_id and
// environment, so a row of another tenant is indistinguishable from a missing one.
type CatalogStore struct {
	db handle
}

var _ catalog.Store = (*CatalogStore)(nil)

// NewCatalogStore returns the catalog store on db.
func NewCatalogStore(db *sqlx.DB) *CatalogStore { return &CatalogStore{db: wrap(db)} }

const catalogProductCols = `id, merchant_id, environment, seq, name, description, tax_code, unit_label,
	statement_descriptor, url, images, tags, shippable, package_dimensions, metadata, default_price,
	active, created, updated`

const catalogPriceCols = `id, merchant_id, environment, product_id, seq, currency, unit_amount, nickname,
	lookup_key, tax_behavior, recurring_interval, recurring_interval_count, recurring_trial_days,
	recurring_usage_type, metadata, active, created, updated`

type catalogProductRow struct {
	ID                  string         `db:"id"`
	MerchantID          string         `db:"merchant_id"`
	Environment         string         `db:"environment"`
	Seq                 int64          `db:"seq"`
	Name                string         `db:"name"`
	Description         string         `db:"description"`
	TaxCode             string         `db:"tax_code"`
	UnitLabel           string         `db:"unit_label"`
	StatementDescriptor string         `db:"statement_descriptor"`
	URL                 string         `db:"url"`
	Images              pq.StringArray `db:"images"`
	Tags                pq.StringArray `db:"tags"`
	Shippable           sql.NullBool   `db:"shippable"`
	PackageDimensions   []byte         `db:"package_dimensions"`
	Metadata            []byte         `db:"metadata"`
	DefaultPrice        sql.NullString `db:"default_price"`
	Active              bool           `db:"active"`
	Created             time.Time      `db:"created"`
	Updated             time.Time      `db:"updated"`
}

type catalogPriceRow struct {
	ID            string         `db:"id"`
	MerchantID    string         `db:"merchant_id"`
	Environment   string         `db:"environment"`
	ProductID     string         `db:"product_id"`
	Seq           int64          `db:"seq"`
	Currency      string         `db:"currency"`
	UnitAmount    int64          `db:"unit_amount"`
	Nickname      string         `db:"nickname"`
	LookupKey     string         `db:"lookup_key"`
	TaxBehavior   string         `db:"tax_behavior"`
	Interval      sql.NullString `db:"recurring_interval"`
	IntervalCount sql.NullInt64  `db:"recurring_interval_count"`
	TrialDays     sql.NullInt64  `db:"recurring_trial_days"`
	UsageType     sql.NullString `db:"recurring_usage_type"`
	Metadata      []byte         `db:"metadata"`
	Active        bool           `db:"active"`
	Created       time.Time      `db:"created"`
	Updated       time.Time      `db:"updated"`
}

type catalogDimensions struct {
	Length float64 `json:"length"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Weight float64 `json:"weight"`
}

func (r catalogProductRow) record() (catalog.ProductSnapshot, error) {
	rec := catalog.ProductSnapshot{
		ID:                  r.ID,
		Scope:               core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		Name:                r.Name,
		Description:         r.Description,
		TaxCode:             r.TaxCode,
		UnitLabel:           r.UnitLabel,
		StatementDescriptor: r.StatementDescriptor,
		URL:                 r.URL,
		Images:              []string(r.Images),
		Tags:                []string(r.Tags),
		DefaultPrice:        r.DefaultPrice.String,
		Active:              r.Active,
		Created:             r.Created.UTC(),
		Updated:             r.Updated.UTC(),
	}
	if r.Shippable.Valid {
		v := r.Shippable.Bool
		rec.Shippable = &v
	}
	if r.PackageDimensions != nil {
		var d catalogDimensions
		if err := json.Unmarshal(r.PackageDimensions, &d); err != nil {
			return rec, fmt.Errorf("catalog: decode package_dimensions of %s: %w", r.ID, err)
		}
		rec.PackageDimensions = &catalog.Dimensions{Length: d.Length, Width: d.Width, Height: d.Height, Weight: d.Weight}
	}
	if err := json.Unmarshal(r.Metadata, &rec.Metadata); err != nil {
		return rec, fmt.Errorf("catalog: decode metadata of %s: %w", r.ID, err)
	}
	return rec, nil
}

func (r catalogPriceRow) price() (*catalog.Price, error) {
	rec := catalog.PriceSnapshot{
		ID:          r.ID,
		Scope:       core.Scope{MerchantID: r.MerchantID, Env: core.Environment(r.Environment)},
		ProductID:   r.ProductID,
		Currency:    core.Currency(r.Currency),
		UnitAmount:  r.UnitAmount,
		Nickname:    r.Nickname,
		LookupKey:   r.LookupKey,
		TaxBehavior: r.TaxBehavior,
		Active:      r.Active,
		Created:     r.Created.UTC(),
		Updated:     r.Updated.UTC(),
	}
	if r.Interval.Valid {
		rc := &catalog.Recurring{Interval: r.Interval.String, IntervalCount: int(r.IntervalCount.Int64), UsageType: r.UsageType.String}
		if r.TrialDays.Valid {
			d := int(r.TrialDays.Int64)
			rc.TrialPeriodDays = &d
		}
		rec.Recurring = rc
	}
	if err := json.Unmarshal(r.Metadata, &rec.Metadata); err != nil {
		return nil, fmt.Errorf("catalog: decode metadata of %s: %w", r.ID, err)
	}
	return catalog.RehydratePrice(rec), nil
}

// catalogLookupKeyTaken maps the partial unique index on active lookup keys to the store
// sentinel.
func catalogLookupKeyTaken(err error) error {
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23505" && pe.Constraint == "prices_lookup_key_active" {
		return catalog.ErrLookupKeyInUse
	}
	return err
}

// catalogProductColumns encodes the product columns that are not stored as they are: metadata
// and package dimensions as JSON text, and an unset default price as NULL.
func catalogProductColumns(r catalog.ProductSnapshot) (md string, dims, defaultPrice any, err error) {
	if md, err = jsonText(r.Metadata); err != nil {
		return "", nil, nil, err
	}
	if d := r.PackageDimensions; d != nil {
		if dims, err = jsonText(catalogDimensions{d.Length, d.Width, d.Height, d.Weight}); err != nil {
			return "", nil, nil, err
		}
	}
	if r.DefaultPrice != "" {
		defaultPrice = r.DefaultPrice
	}
	return md, dims, defaultPrice, nil
}

func catalogInsertProduct(ctx context.Context, tx *sqlx.Tx, r catalog.ProductSnapshot) error {
	md, dims, defaultPrice, err := catalogProductColumns(r)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO products (id, merchant_id, environment, name, description,
		tax_code, unit_label, statement_descriptor, url, images, tags, shippable, package_dimensions,
		metadata, default_price, active, created, updated)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		r.ID, r.Scope.MerchantID, string(r.Scope.Env), r.Name, r.Description, r.TaxCode, r.UnitLabel,
		r.StatementDescriptor, r.URL, pq.StringArray(catalogStrings(r.Images)), pq.StringArray(catalogStrings(r.Tags)),
		r.Shippable, dims, md, defaultPrice, r.Active, r.Created, r.Updated)
	return err
}

func catalogUpdateProduct(ctx context.Context, tx *sqlx.Tx, r catalog.ProductSnapshot) error {
	md, dims, defaultPrice, err := catalogProductColumns(r)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE products SET name = $4, description = $5, tax_code = $6,
		unit_label = $7, statement_descriptor = $8, url = $9, images = $10, tags = $11, shippable = $12,
		package_dimensions = $13, metadata = $14, default_price = $15, active = $16, updated = $17
		WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
		r.ID, r.Scope.MerchantID, string(r.Scope.Env), r.Name, r.Description, r.TaxCode, r.UnitLabel,
		r.StatementDescriptor, r.URL, pq.StringArray(catalogStrings(r.Images)), pq.StringArray(catalogStrings(r.Tags)),
		r.Shippable, dims, md, defaultPrice, r.Active, r.Updated)
	return err
}

func catalogInsertPrice(ctx context.Context, tx *sqlx.Tx, r catalog.PriceSnapshot) error {
	md, err := jsonText(r.Metadata)
	if err != nil {
		return err
	}
	var interval, count, trial, usage any
	if rc := r.Recurring; rc != nil {
		interval, count, usage = rc.Interval, rc.IntervalCount, rc.UsageType
		if rc.TrialPeriodDays != nil {
			trial = *rc.TrialPeriodDays
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO prices (id, merchant_id, environment, product_id, currency,
		unit_amount, nickname, lookup_key, tax_behavior, recurring_interval, recurring_interval_count,
		recurring_trial_days, recurring_usage_type, metadata, active, created, updated)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		r.ID, r.Scope.MerchantID, string(r.Scope.Env), r.ProductID, string(r.Currency), r.UnitAmount,
		r.Nickname, r.LookupKey, r.TaxBehavior, interval, count, trial, usage, md, r.Active, r.Created, r.Updated)
	return catalogLookupKeyTaken(err)
}

// updatePrice writes the mutable fields of a price; amount, currency and recurrence never change.
func catalogUpdatePrice(ctx context.Context, tx *sqlx.Tx, r catalog.PriceSnapshot) error {
	md, err := jsonText(r.Metadata)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE prices SET nickname = $4, lookup_key = $5, tax_behavior = $6,
		metadata = $7, active = $8, updated = $9
		WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
		r.ID, r.Scope.MerchantID, string(r.Scope.Env), r.Nickname, r.LookupKey, r.TaxBehavior, md, r.Active, r.Updated)
	return catalogLookupKeyTaken(err)
}

func catalogStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CreateProduct inserts the product, its prices and its default-price link in one transaction.
func (s *CatalogStore) CreateProduct(ctx context.Context, p *catalog.Product) error {
	return inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := catalogInsertProduct(ctx, tx, p.Snapshot()); err != nil {
			return err
		}
		prices := p.Prices()
		for i := len(prices) - 1; i >= 0; i-- { // oldest first, so seq follows creation
			if err := catalogInsertPrice(ctx, tx, prices[i].Snapshot()); err != nil {
				return err
			}
		}
		return nil
	})
}

// catalogPricesOfSQL selects the prices of products $3 of merchant $1 in environment $2,
// each product's newest first. It is a join on the product ids, not "product_id = ANY($3)
// ORDER BY seq DESC": each product is an equality on prices_product's columns in its order,
// so the plan is an index scan of prices_product per product in every state of the planner
// statistics (never analysed included, migration 00019; planner_test.go); with ANY, the
// list index prices_scope gives the seq order without a sort and wins whenever the statistics
// cannot tell how many prices the merchant has, filtering every one of them.
const catalogPricesOfSQL = `SELECT p.* FROM unnest($3::text[]) AS u(product_id)
		CROSS JOIN LATERAL (SELECT ` + catalogPriceCols + ` FROM prices
			WHERE merchant_id = $1 AND environment = $2 AND product_id = u.product_id AND seq > 0 -- ListPredicate
			ORDER BY seq DESC) p`

// catalogPricesOf loads the prices of productIDs, newest first, keyed by product.
func catalogPricesOf(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, productIDs []string, lock bool) (map[string][]*catalog.Price, error) {
	query := catalogPricesOfSQL
	if lock {
		query += ` FOR UPDATE OF p`
	}
	var rows []catalogPriceRow
	if err := sqlx.SelectContext(ctx, q, &rows, query, scope.MerchantID, string(scope.Env), pq.StringArray(productIDs)); err != nil {
		return nil, err
	}
	out := make(map[string][]*catalog.Price, len(productIDs))
	for _, r := range rows {
		pr, err := r.price()
		if err != nil {
			return nil, err
		}
		out[r.ProductID] = append(out[r.ProductID], pr)
	}
	return out, nil
}

func catalogGetProduct(ctx context.Context, q sqlx.QueryerContext, scope core.Scope, id string, lock bool) (*catalog.Product, error) {
	query := `SELECT ` + catalogProductCols + ` FROM products WHERE id = $1 AND merchant_id = $2 AND environment = $3`
	if lock {
		query += ` FOR UPDATE`
	}
	var row catalogProductRow
	if err := sqlx.GetContext(ctx, q, &row, query, id, scope.MerchantID, string(scope.Env)); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, catalog.ErrNotFound
		}
		return nil, err
	}
	rec, err := row.record()
	if err != nil {
		return nil, err
	}
	prices, err := catalogPricesOf(ctx, q, scope, []string{id}, lock)
	if err != nil {
		return nil, err
	}
	return catalog.RehydrateProduct(rec, prices[id]), nil
}

// GetProduct returns the product with all its prices.
func (s *CatalogStore) GetProduct(ctx context.Context, scope core.Scope, id string) (*catalog.Product, error) {
	return catalogGetProduct(ctx, s.db, scope, id, false)
}

// UpdateProduct runs fn on the locked product and writes back what the product says fn
// changed (catalog.Product.Changes).
func (s *CatalogStore) UpdateProduct(ctx context.Context, scope core.Scope, id string, fn func(*catalog.Product) error) (*catalog.Product, error) {
	var out *catalog.Product
	err := inTx(ctx, s.db, func(tx *sqlx.Tx) error {
		p, err := catalogGetProduct(ctx, tx, scope, id, true)
		if err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
		// The entity says what changed. Changed prices first: a price deactivated here frees
		// its lookup key before a new price takes it; then new prices, oldest first, so that a
		// new default price exists before the product links it.
		c := p.Changes()
		for _, pr := range c.Changed {
			if err := catalogUpdatePrice(ctx, tx, pr.Snapshot()); err != nil {
				return err
			}
		}
		for _, pr := range c.Added {
			if err := catalogInsertPrice(ctx, tx, pr.Snapshot()); err != nil {
				return err
			}
		}
		if c.Product {
			if err := catalogUpdateProduct(ctx, tx, p.Snapshot()); err != nil {
				return err
			}
		}
		out = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetPrice returns a price of any product of the scope.
func (s *CatalogStore) GetPrice(ctx context.Context, scope core.Scope, id string) (*catalog.Price, error) {
	var row catalogPriceRow
	err := s.db.GetContext(ctx, &row, `SELECT `+catalogPriceCols+` FROM prices
		WHERE id = $1 AND merchant_id = $2 AND environment = $3`, id, scope.MerchantID, string(scope.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, catalog.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return row.price()
}

// ListProducts pages the scope's products, each with all its prices.
func (s *CatalogStore) ListProducts(ctx context.Context, scope core.Scope, q core.ListQuery, active *bool) (core.Page[*catalog.Product], error) {
	rows, hasMore, err := pageBySeq[catalogProductRow](ctx, s.db, pageQuery{
		table: "products", columns: catalogProductCols, scope: scope, q: q,
		filter:        when(active != nil, cond{"active = ?", active}),
		unknownCursor: catalog.ErrUnknownCursor,
	})
	if err != nil {
		return core.Page[*catalog.Product]{}, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	prices, err := catalogPricesOf(ctx, s.db, scope, ids, false)
	if err != nil {
		return core.Page[*catalog.Product]{}, err
	}
	out := core.Page[*catalog.Product]{Items: make([]*catalog.Product, 0, len(rows)), HasMore: hasMore}
	for _, r := range rows {
		rec, err := r.record()
		if err != nil {
			return core.Page[*catalog.Product]{}, err
		}
		out.Items = append(out.Items, catalog.RehydrateProduct(rec, prices[r.ID]))
	}
	return out, nil
}

// ListPrices pages the prices of a product of the scope.
func (s *CatalogStore) ListPrices(ctx context.Context, scope core.Scope, productID string, q core.ListQuery, active *bool) (core.Page[*catalog.Price], error) {
	var exists bool
	if err := s.db.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM products
		WHERE id = $1 AND merchant_id = $2 AND environment = $3)`, productID, scope.MerchantID, string(scope.Env)); err != nil {
		return core.Page[*catalog.Price]{}, err
	}
	if !exists {
		return core.Page[*catalog.Price]{}, catalog.ErrNotFound
	}
	rows, hasMore, err := pageBySeq[catalogPriceRow](ctx, s.db, pageQuery{
		table: "prices", columns: catalogPriceCols, scope: scope, q: q,
		within:        []cond{{"product_id = ?", productID}},
		filter:        when(active != nil, cond{"active = ?", active}),
		unknownCursor: catalog.ErrUnknownCursor,
	})
	if err != nil {
		return core.Page[*catalog.Price]{}, err
	}
	out := core.Page[*catalog.Price]{Items: make([]*catalog.Price, 0, len(rows)), HasMore: hasMore}
	for _, r := range rows {
		pr, err := r.price()
		if err != nil {
			return core.Page[*catalog.Price]{}, err
		}
		out.Items = append(out.Items, pr)
	}
	return out, nil
}
