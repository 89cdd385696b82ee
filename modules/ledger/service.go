package ledger

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Service reads the ledger: balances and balance transactions.
type Service struct {
	store Store
}

// NewService returns the service.
func NewService(store Store) (*Service, error) {
	if store == nil {
		return nil, errors.New("ledger: the store is required")
	}
	return &Service{store: store}, nil
}

// Balances reads scope's balance per currency (available and pending). Its cost is one row
// per currency and account, whatever the number of transactions.
func (s *Service) Balances(ctx context.Context, scope core.Scope) ([]Balance, error) {
	return s.store.Balances(ctx, scope)
}

// Transactions lists scope's balance transactions, newest first, narrowed by f.
func (s *Service) Transactions(ctx context.Context, scope core.Scope, q core.ListQuery, f Filter) (core.Page[*Transaction], error) {
	if f.Type != "" && !f.Type.Valid() {
		return core.Page[*Transaction]{}, ErrTypeInvalid
	}
	q, err := q.Normalize()
	if err != nil {
		return core.Page[*Transaction]{}, err
	}
	page, err := s.store.List(ctx, scope, q, f)
	if errors.Is(err, ErrUnknownCursor) {
		return page, q.UnknownCursor()
	}
	return page, err
}

// Transaction reads one balance transaction; an unknown id (or one of another scope) is
// 404 balance_transaction_not_found.
func (s *Service) Transaction(ctx context.Context, scope core.Scope, id string) (*Transaction, error) {
	t, err := s.store.Get(ctx, scope, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrTransactionNotFound.At("id")
	}
	return t, err
}
