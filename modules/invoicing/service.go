package invoicing

import (
	"context"
	"errors"
	"strings"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Deps are the service's collaborators; every one is required.
type Deps struct {
	Store     Store
	UoW       ports.UnitOfWorkOf[Tx]
	Clocks    ports.Clocks
	Prices    PriceLookup
	Merchants Merchants
	Charger   *payments.Charger
	// CheckoutBaseURL is the checkout origin; the hosted page is {CheckoutBaseURL}/i/{token}.
	CheckoutBaseURL string
	// Methods, when not nil, saves the method a subscription's invoice is paid with on its
	// hosted page (nil: nothing is saved).
	Methods SubscriptionMethods
}

// Service is the invoices' use cases.
type Service struct {
	store     Store
	uow       ports.UnitOfWorkOf[Tx]
	clocks    ports.Clocks
	prices    PriceLookup
	merchants Merchants
	charger   *payments.Charger
	base      string
	methods   SubscriptionMethods
}

// NewService checks that every dependency is given.
func NewService(d Deps) (*Service, error) {
	if d.Store == nil || d.UoW == nil || d.Clocks == nil || d.Prices == nil || d.Merchants == nil || d.Charger == nil || d.CheckoutBaseURL == "" {
		return nil, errors.New("invoicing: every dependency is required")
	}
	return &Service{store: d.Store, uow: d.UoW, clocks: d.Clocks, prices: d.Prices, merchants: d.Merchants,
		charger: d.Charger, base: strings.TrimRight(d.CheckoutBaseURL, "/"), methods: d.Methods}, nil
}

// HostedURL is the invoice's page for its customer, or nil for a draft.
func (s *Service) HostedURL(inv *Invoice) *string { return hostedURL(s.base, inv) }

// notFound maps the store's sentinel to the documented 404.
func notFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrInvoiceNotFound
	}
	return err
}

// change runs fn on invoice id locked in one unit of work and saves it; fn's events are added
// in the same transaction.
func (s *Service) change(ctx context.Context, scope core.Scope, id string, fn func(ctx context.Context, tx Tx, inv *Invoice) ([]core.Event, error)) (*Invoice, error) {
	var out *Invoice
	err := s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		out = nil
		inv, err := tx.Invoices().Lock(ctx, scope, id)
		if err != nil {
			return notFound(err)
		}
		evs, err := fn(ctx, tx, inv)
		if err != nil {
			return err
		}
		if err := tx.Invoices().Save(ctx, inv); err != nil {
			return err
		}
		if err := tx.Outbox().Add(ctx, evs...); err != nil {
			return err
		}
		out = inv
		return nil
	})
	return out, err
}
