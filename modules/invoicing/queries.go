package invoicing

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Get reads one invoice of the scope (404 invoice_not_found).
func (s *Service) Get(ctx context.Context, scope core.Scope, id string) (*Invoice, error) {
	inv, err := s.store.Get(ctx, scope, id)
	return inv, notFound(err)
}

// List pages the scope's invoices, newest first, optionally of one status.
func (s *Service) List(ctx context.Context, scope core.Scope, q core.ListQuery, f ListFilter) (core.Page[*Invoice], error) {
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Invoice]{}, err
	}
	p, err := s.store.List(ctx, scope, q, f)
	if errors.Is(err, ErrUnknownCursor) {
		return p, q.UnknownCursor()
	}
	return p, err
}

// Hosted is what the hosted invoice page shows.
type Hosted struct {
	Invoice  *Invoice
	Merchant Merchant
}

// Hosted reads the sent invoice of public token t and its merchant; an unknown token (or a
// draft, which has none) is 404.
func (s *Service) Hosted(ctx context.Context, token string) (*Hosted, error) {
	if len(token) < 32 || len(token) > 64 {
		return nil, ErrHostedNotFound
	}
	inv, err := s.store.ByToken(ctx, token)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrHostedNotFound
	}
	if err != nil {
		return nil, err
	}
	m, err := s.merchants.InvoiceMerchant(ctx, inv.Scope().MerchantID)
	if err != nil {
		return nil, err
	}
	return &Hosted{Invoice: inv, Merchant: m}, nil
}

// Document reads invoice id of the scope with its merchant, for its PDF (404
// invoice_not_found).
func (s *Service) Document(ctx context.Context, scope core.Scope, id string) (*Hosted, error) {
	inv, err := s.Get(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	m, err := s.merchants.InvoiceMerchant(ctx, scope.MerchantID)
	if err != nil {
		return nil, err
	}
	return &Hosted{Invoice: inv, Merchant: m}, nil
}
