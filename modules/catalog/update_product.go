package catalog

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// ProductPatch is an update of a product (POST /v1/products/{id}). A nil field is left
// untouched; for optional strings "" unsets the field. Images and Tags replace the whole list.
// Metadata is merged key by key, "" deleting a key.
type ProductPatch struct {
	Name                   *string
	Description            *string
	TaxCode                *string
	UnitLabel              *string
	StatementDescriptor    *string
	URL                    *string
	Images                 *[]string
	Tags                   *[]string
	Shippable              *bool
	PackageDimensions      *Dimensions
	ClearPackageDimensions bool // true unsets package_dimensions (wins over PackageDimensions)
	Metadata               map[string]string
	Active                 *bool   // true un-archives the product only, never its prices
	DefaultPrice           *string // an active price of this product; "" unsets
}

// UpdateProduct applies p to the product under its row lock.
func (s *Service) UpdateProduct(ctx context.Context, scope core.Scope, id string, patch ProductPatch) (*Product, error) {
	now, err := s.now(ctx, scope)
	if err != nil {
		return nil, err
	}
	p, err := s.updateProduct(ctx, scope, id, func(ctx context.Context, w Writer, p *Product) error {
		if err := p.Apply(patch, now); err != nil {
			return err
		}
		if patch.DefaultPrice != nil {
			return setDefault(ctx, w, p, *patch.DefaultPrice, "default_price", now)
		}
		return nil
	})
	return p, productNotFound(err, id)
}

// setDefault links priceID as p's default, telling an unknown price (404) from one of another
// product (price_product_mismatch) and an inactive one (price_inactive).
func setDefault(ctx context.Context, w Writer, p *Product, priceID, param string, now time.Time) error {
	if priceID != "" && p.Price(priceID) == nil {
		if _, err := w.GetPrice(ctx, p.Scope(), priceID); err != nil {
			if errors.Is(err, ErrNotFound) {
				return core.NotFound("price", param, priceID)
			}
			return err
		}
		return ErrPriceProductMismatch.At(param)
	}
	return p.SetDefaultPrice(priceID, param, now)
}
