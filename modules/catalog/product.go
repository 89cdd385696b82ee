package catalog

import (
	"slices"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Dimensions is a product's package size: length, width, height in cm and weight in g (D13).
type Dimensions struct {
	Length, Width, Height, Weight float64
}

// ProductInput is what a merchant sends to create a product (interface 2.4). Optional strings
// that are nil or "" stay unset.
type ProductInput struct {
	Name                string
	Description         *string
	TaxCode             *string
	UnitLabel           *string
	StatementDescriptor *string
	URL                 *string
	Images              []string
	Tags                []string
	Shippable           *bool
	PackageDimensions   *Dimensions
	Metadata            map[string]string
	Active              *bool // default true
}

// ProductSnapshot is the stored form of a product: what a store writes, and what it hands to
// RehydrateProduct. Optional strings are "" when unset.
type ProductSnapshot struct {
	ID                  string
	Scope               core.Scope
	Name                string
	Description         string
	TaxCode             string
	UnitLabel           string
	StatementDescriptor string
	URL                 string
	Images              []string
	Tags                []string
	Shippable           *bool
	PackageDimensions   *Dimensions
	Metadata            map[string]string
	DefaultPrice        string // price id, "" when none
	Active              bool
	Created             time.Time
	Updated             time.Time
}

// Product is a catalog product (prod_) together with its prices, newest first.
type Product struct {
	r      ProductSnapshot
	prices []*Price
	// changed and added are what the transitions since NewProduct or RehydrateProduct did
	// (Changes): the product's own fields changed, and the prices attached, oldest first.
	changed bool
	added   []*Price
}

// Changes is what a product's transitions changed since it was built (NewProduct) or rebuilt
// from storage (RehydrateProduct). A Store's UpdateProduct writes exactly this back.
type Changes struct {
	// Product is true when the product's own fields changed (Apply, SetDefaultPrice, Archive
	// of an active product).
	Product bool
	// Added are the prices attached with AddPrice, oldest first.
	Added []*Price
	// Changed are the prices the product had before whose fields changed (Price.Apply, or
	// deactivated by Archive), oldest first.
	Changed []*Price
}

// Changes reports what changed since the product was built or rehydrated.
func (p *Product) Changes() Changes {
	c := Changes{Product: p.changed, Added: append([]*Price(nil), p.added...)}
	for i := len(p.prices) - 1; i >= 0; i-- {
		pr := p.prices[i]
		if pr.changed && !slices.Contains(p.added, pr) {
			c.Changed = append(c.Changed, pr)
		}
	}
	return c
}

// NewProduct checks in and builds a new active (unless in.Active is false) product of scope.
func NewProduct(scope core.Scope, in ProductInput, now time.Time) (*Product, error) {
	name, err := checkName(in.Name, "name")
	if err != nil {
		return nil, err
	}
	r := ProductSnapshot{
		ID:       core.NewID(core.PrefixProduct),
		Scope:    scope,
		Name:     name,
		Active:   in.Active == nil || *in.Active,
		Created:  now,
		Updated:  now,
		Images:   []string{},
		Tags:     []string{},
		Metadata: map[string]string{},
	}
	for _, f := range []struct {
		name string
		v    *string
		dst  *string
	}{
		{"description", in.Description, &r.Description},
		{"tax_code", in.TaxCode, &r.TaxCode},
		{"unit_label", in.UnitLabel, &r.UnitLabel},
		{"statement_descriptor", in.StatementDescriptor, &r.StatementDescriptor},
		{"url", in.URL, &r.URL},
	} {
		if err := checkOptional(f.name, deref(f.v)); err != nil {
			return nil, err
		}
		*f.dst = deref(f.v)
	}
	if err := checkImages(in.Images); err != nil {
		return nil, err
	}
	r.Images = cloneStrings(in.Images)
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	r.Tags = cloneStrings(in.Tags)
	if in.Shippable != nil {
		v := *in.Shippable
		r.Shippable = &v
	}
	if in.PackageDimensions != nil {
		if err := checkDimensions(*in.PackageDimensions); err != nil {
			return nil, err
		}
		d := *in.PackageDimensions
		r.PackageDimensions = &d
	}
	if r.Metadata, err = mergeMetadata(nil, in.Metadata, ""); err != nil {
		return nil, err
	}
	return &Product{r: r}, nil
}

// RehydrateProduct rebuilds a product from storage without validating it. prices are the
// product's prices, newest first.
func RehydrateProduct(r ProductSnapshot, prices []*Price) *Product {
	return &Product{r: r, prices: prices}
}

// Snapshot returns a copy of the product's own state for storage (without its prices).
func (p *Product) Snapshot() ProductSnapshot {
	r := p.r
	r.Images = cloneStrings(p.r.Images)
	r.Tags = cloneStrings(p.r.Tags)
	r.Metadata = cloneMap(p.r.Metadata)
	if p.r.Shippable != nil {
		v := *p.r.Shippable
		r.Shippable = &v
	}
	if p.r.PackageDimensions != nil {
		d := *p.r.PackageDimensions
		r.PackageDimensions = &d
	}
	return r
}

func (p *Product) ID() string                  { return p.r.ID }
func (p *Product) Scope() core.Scope           { return p.r.Scope }
func (p *Product) Name() string                { return p.r.Name }
func (p *Product) Description() string         { return p.r.Description }
func (p *Product) TaxCode() string             { return p.r.TaxCode }
func (p *Product) UnitLabel() string           { return p.r.UnitLabel }
func (p *Product) StatementDescriptor() string { return p.r.StatementDescriptor }
func (p *Product) URL() string                 { return p.r.URL }
func (p *Product) Images() []string            { return cloneStrings(p.r.Images) }
func (p *Product) Tags() []string              { return cloneStrings(p.r.Tags) }
func (p *Product) Metadata() map[string]string { return cloneMap(p.r.Metadata) }
func (p *Product) DefaultPrice() string        { return p.r.DefaultPrice }
func (p *Product) Active() bool                { return p.r.Active }
func (p *Product) Created() time.Time          { return p.r.Created }
func (p *Product) Updated() time.Time          { return p.r.Updated }

// Shippable is nil when the merchant never said.
func (p *Product) Shippable() *bool { return p.Snapshot().Shippable }

// PackageDimensions is nil when unset.
func (p *Product) PackageDimensions() *Dimensions { return p.Snapshot().PackageDimensions }

// Prices returns the product's prices, newest first.
func (p *Product) Prices() []*Price { return append([]*Price(nil), p.prices...) }

// Price returns the product's price with id, or nil.
func (p *Product) Price(id string) *Price {
	for _, pr := range p.prices {
		if pr.ID() == id {
			return pr
		}
	}
	return nil
}

// Apply changes the product's own fields (everything but default_price, which needs the
// prices and is set with SetDefaultPrice). Nothing changes when a field is invalid.
// Re-activating a product does not re-activate its prices.
func (p *Product) Apply(patch ProductPatch, now time.Time) error {
	r := p.Snapshot()
	if patch.Name != nil {
		name, err := checkName(*patch.Name, "name")
		if err != nil {
			return err
		}
		r.Name = name
	}
	for _, f := range []struct {
		name string
		v    *string
		dst  *string
	}{
		{"description", patch.Description, &r.Description},
		{"tax_code", patch.TaxCode, &r.TaxCode},
		{"unit_label", patch.UnitLabel, &r.UnitLabel},
		{"statement_descriptor", patch.StatementDescriptor, &r.StatementDescriptor},
		{"url", patch.URL, &r.URL},
	} {
		if f.v == nil {
			continue
		}
		if err := checkOptional(f.name, *f.v); err != nil {
			return err
		}
		*f.dst = *f.v
	}
	if patch.Images != nil {
		if err := checkImages(*patch.Images); err != nil {
			return err
		}
		r.Images = cloneStrings(*patch.Images)
	}
	if patch.Tags != nil {
		if err := checkTags(*patch.Tags); err != nil {
			return err
		}
		r.Tags = cloneStrings(*patch.Tags)
	}
	if patch.Shippable != nil {
		v := *patch.Shippable
		r.Shippable = &v
	}
	if patch.ClearPackageDimensions {
		r.PackageDimensions = nil
	} else if patch.PackageDimensions != nil {
		if err := checkDimensions(*patch.PackageDimensions); err != nil {
			return err
		}
		d := *patch.PackageDimensions
		r.PackageDimensions = &d
	}
	if patch.Metadata != nil {
		md, err := mergeMetadata(r.Metadata, patch.Metadata, "")
		if err != nil {
			return err
		}
		r.Metadata = md
	}
	if patch.Active != nil {
		r.Active = *patch.Active
	}
	r.Updated = now
	p.r = r
	p.changed = true
	return nil
}

// SetDefaultPrice links priceID as the product's default price; "" clears it. The price must
// be an active price of this product; param names the request field (`price` or
// `default_price`). A price that is not this product's gives price_not_found here: the caller
// tells a foreign price (price_product_mismatch) from an unknown one, which needs the store.
//
// Deactivating the default price later leaves default_price pointing at it, as Stripe does:
// the link is history the merchant set, and only SetDefaultPrice changes it.
func (p *Product) SetDefaultPrice(priceID, param string, now time.Time) error {
	if priceID == "" {
		p.r.DefaultPrice = ""
		p.r.Updated = now
		p.changed = true
		return nil
	}
	pr := p.Price(priceID)
	if pr == nil {
		return core.NotFound("price", param, priceID)
	}
	if !pr.Active() {
		return ErrPriceInactive.At(param)
	}
	p.r.DefaultPrice = priceID
	p.r.Updated = now
	p.changed = true
	return nil
}

// Archive sets the product and all its prices inactive (DELETE /v1/products/{id}); archiving
// an archived product changes nothing.
func (p *Product) Archive(now time.Time) {
	if p.r.Active {
		p.r.Active = false
		p.r.Updated = now
		p.changed = true
	}
	for _, pr := range p.prices {
		pr.deactivate(now)
	}
}

// AddPrice attaches a new price to the product (newest first). The product must be active and
// the price must belong to it.
func (p *Product) AddPrice(pr *Price) error {
	if !p.r.Active {
		return ErrProductInactive
	}
	if pr.ProductID() != p.r.ID || pr.Scope() != p.r.Scope {
		return ErrPriceProductMismatch
	}
	p.prices = append([]*Price{pr}, p.prices...)
	p.added = append(p.added, pr)
	return nil
}
