package catalog

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// GetProduct returns a product of the scope with all its prices.
func (s *Service) GetProduct(ctx context.Context, scope core.Scope, id string) (*Product, error) {
	p, err := s.store.GetProduct(ctx, scope, id)
	if err != nil {
		return nil, productNotFound(err, id)
	}
	return p, nil
}

// ListProducts pages the scope's products, newest first, each with its prices; active filters
// on the active flag when set.
func (s *Service) ListProducts(ctx context.Context, scope core.Scope, q core.ListQuery, active *bool) (core.Page[*Product], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Product]{}, err
	}
	page, err := s.store.ListProducts(ctx, scope, q, active)
	return page, err
}

// ListPrices pages a product's prices, newest first.
func (s *Service) ListPrices(ctx context.Context, scope core.Scope, productID string, q core.ListQuery, active *bool) (core.Page[*Price], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Price]{}, err
	}
	page, err := s.store.ListPrices(ctx, scope, productID, q, active)
	if err != nil {
		return page, productNotFound(err, productID)
	}
	return page, nil
}

// GetPrice returns a price of the product: product_not_found when the product is unknown,
// price_not_found (param `price_id`, the path parameter) when the price is unknown or belongs to
// another product.
func (s *Service) GetPrice(ctx context.Context, scope core.Scope, productID, priceID string) (*Price, error) {
	pr, err := s.store.GetPrice(ctx, scope, priceID)
	if err == nil && pr.ProductID() == productID {
		return pr, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if _, err := s.store.GetProduct(ctx, scope, productID); err != nil {
		return nil, productNotFound(err, productID)
	}
	return nil, core.NotFound("price", "price_id", priceID)
}

// FindPrice returns a price of any product of the scope (checkout and billing look prices up
// by id alone); price_not_found when unknown.
func (s *Service) FindPrice(ctx context.Context, scope core.Scope, priceID string) (*Price, error) {
	pr, err := s.store.GetPrice(ctx, scope, priceID)
	if errors.Is(err, ErrNotFound) {
		return nil, core.NotFound("price", "", priceID)
	}
	return pr, err
}
