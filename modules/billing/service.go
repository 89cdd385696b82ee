package billing

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Deps are the service's collaborators. Store, UoW, Clocks and Prices are required; an
// environment without a MethodSaver cannot save payment methods (ErrProcessorUnavailable).
type Deps struct {
	Store  Store
	UoW    ports.UnitOfWorkOf[Tx]
	Clocks ports.Clocks
	// Savers gives the processor of each environment (test → the sandbox).
	Savers map[core.Environment]ports.MethodSaver
	// Prices reads the catalog's prices for new subscriptions.
	Prices PriceLookup
	// Invoices writes the subscriptions' invoices; without it a subscription without a trial
	// has no first invoice to pay.
	Invoices Invoicer
	// Charger charges the subscriptions' invoices (payable kind InvoiceKind).
	Charger     *payments.Charger
	InvoiceKind payments.PayableKind
}

// Service is billing's use cases.
type Service struct {
	store  Store
	uow    ports.UnitOfWorkOf[Tx]
	clocks ports.Clocks
	savers map[core.Environment]ports.MethodSaver
	prices PriceLookup

	invoices    Invoicer
	charger     *payments.Charger
	invoiceKind payments.PayableKind
}

// NewService checks the dependencies.
func NewService(d Deps) (*Service, error) {
	if d.Store == nil || d.UoW == nil || d.Clocks == nil || d.Prices == nil {
		return nil, errors.New("billing: the store, the unit of work, the clocks and the price lookup are required")
	}
	savers := make(map[core.Environment]ports.MethodSaver, len(d.Savers))
	for env, s := range d.Savers {
		if s != nil {
			savers[env] = s
		}
	}
	return &Service{store: d.Store, uow: d.UoW, clocks: d.Clocks, savers: savers, prices: d.Prices,
		invoices: d.Invoices, charger: d.Charger, invoiceKind: d.InvoiceKind}, nil
}

// customerNotFound maps the store's sentinel to the documented 404.
func customerNotFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrCustomerNotFound
	}
	return err
}

// methodNotFound maps the store's sentinel to the documented 404.
func methodNotFound(err error) error {
	if errors.Is(err, ErrMethodNotFound) {
		return ErrPaymentMethodNotFound
	}
	return err
}
