package billing

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// FindOrCreateCustomer answers the scope's customer with that e-mail (trimmed, any case), or
// a new one with name and e-mail; created says which. The name of a customer found is kept.
// A bad name or e-mail is reported at customer_name / customer_email.
func (s *Service) FindOrCreateCustomer(ctx context.Context, scope core.Scope, name, email string) (*Customer, bool, error) {
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, false, err
	}
	var out *Customer
	var created bool
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out, created, err = FindOrCreateIn(ctx, tx, scope, name, email, now)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// FindOrCreateIn is FindOrCreateCustomer inside the caller's unit of work (a subscription's
// creation): the customer stays locked until it ends.
func FindOrCreateIn(ctx context.Context, tx Tx, scope core.Scope, name, email string, now time.Time) (*Customer, bool, error) {
	c, err := NewCustomer(scope, name, email, now)
	if err != nil {
		return nil, false, err
	}
	return tx.Customers().FindOrInsert(ctx, c)
}

// Customer reads customer id of scope (404 customer_not_found).
func (s *Service) Customer(ctx context.Context, scope core.Scope, id string) (*Customer, error) {
	c, err := s.store.Customer(ctx, scope, id)
	return c, customerNotFound(err)
}

// PaymentMethod reads saved method id of scope (404 payment_method_not_found).
func (s *Service) PaymentMethod(ctx context.Context, scope core.Scope, id string) (*PaymentMethod, error) {
	m, err := s.store.PaymentMethod(ctx, scope, id)
	return m, methodNotFound(err)
}

// CustomerMethods lists the customer's saved methods, newest first.
func (s *Service) CustomerMethods(ctx context.Context, scope core.Scope, customerID string) ([]*PaymentMethod, error) {
	if _, err := s.Customer(ctx, scope, customerID); err != nil {
		return nil, err
	}
	return s.store.CustomerMethods(ctx, scope, customerID)
}
