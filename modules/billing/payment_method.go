package billing

import (
	"fmt"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// PaymentMethod is a method saved for a customer (pm_…): the processor's opaque reference,
// which later charges give back (ports.ChargeRequest.PaymentMethodRef), and only what may be
// stored of the card or account. It is never changed after it is saved.
type PaymentMethod struct {
	s MethodSnapshot
}

// MethodSnapshot is a saved method's full state, for storage. Card fields are empty for a
// SEPA account; Country and Last4 are the account's then.
type MethodSnapshot struct {
	ID       string
	Scope    core.Scope
	Customer string
	Type     ports.PaymentMethodKind
	// ProcessorRef is the processor's saved method (ports.SetupResult.PaymentMethodRef).
	ProcessorRef string
	Brand        string
	Last4        string
	Country      string
	Funding      string
	ExpMonth     int
	ExpYear      int
	Created      time.Time
}

// Saved is what a processor answered about a method it saved, by a setup or by a charge that
// asked to save its method.
type Saved struct {
	Type         ports.PaymentMethodKind
	ProcessorRef string
	Card         *ports.CardInfo
	SEPA         *ports.SEPAInfo
}

// NewPaymentMethod is the method the processor saved for customer.
func NewPaymentMethod(customer *Customer, saved Saved, now time.Time) (*PaymentMethod, error) {
	if saved.ProcessorRef == "" || !saved.Type.Valid() {
		return nil, fmt.Errorf("billing: a saved method needs its type and processor reference")
	}
	s := MethodSnapshot{ID: core.NewID("pm_"), Scope: customer.Scope(), Customer: customer.ID(), Type: saved.Type,
		ProcessorRef: saved.ProcessorRef, Created: now.UTC()}
	switch {
	case saved.Type == ports.MethodCard && saved.Card != nil:
		c := saved.Card
		s.Brand, s.Last4, s.Country, s.Funding, s.ExpMonth, s.ExpYear = c.Brand, c.Last4, c.Country, c.Funding, c.ExpMonth, c.ExpYear
	case saved.Type == ports.MethodSEPADebit && saved.SEPA != nil:
		s.Last4, s.Country = saved.SEPA.Last4, saved.SEPA.Country
	default:
		return nil, fmt.Errorf("billing: a saved %s needs its details", saved.Type)
	}
	return &PaymentMethod{s: s}, nil
}

// RehydratePaymentMethod rebuilds a stored method without re-validating it.
func RehydratePaymentMethod(s MethodSnapshot) *PaymentMethod { return &PaymentMethod{s: s} }

// Snapshot returns a copy of the method's state.
func (m *PaymentMethod) Snapshot() MethodSnapshot { return m.s }

func (m *PaymentMethod) ID() string                    { return m.s.ID }
func (m *PaymentMethod) Scope() core.Scope             { return m.s.Scope }
func (m *PaymentMethod) Customer() string              { return m.s.Customer }
func (m *PaymentMethod) Type() ports.PaymentMethodKind { return m.s.Type }
func (m *PaymentMethod) ProcessorRef() string          { return m.s.ProcessorRef }
func (m *PaymentMethod) Created() time.Time            { return m.s.Created }

// Card is what may be shown of a saved card, nil for a bank account.
func (m *PaymentMethod) Card() *ports.CardInfo {
	if m.s.Type != ports.MethodCard {
		return nil
	}
	return &ports.CardInfo{Brand: m.s.Brand, Last4: m.s.Last4, Country: m.s.Country, Funding: m.s.Funding,
		ExpMonth: m.s.ExpMonth, ExpYear: m.s.ExpYear}
}

// SEPA is what may be shown of a saved bank account, nil for a card.
func (m *PaymentMethod) SEPA() *ports.SEPAInfo {
	if m.s.Type != ports.MethodSEPADebit {
		return nil
	}
	return &ports.SEPAInfo{Country: m.s.Country, Last4: m.s.Last4}
}

// Summary is the method as a subscription shows it (default_payment_method): type, brand,
// last four and expiry.
type Summary struct {
	Type     ports.PaymentMethodKind
	Brand    string
	Last4    string
	ExpMonth int
	ExpYear  int
}

// Summary returns the method's summary.
func (m *PaymentMethod) Summary() Summary {
	return Summary{Type: m.s.Type, Brand: m.s.Brand, Last4: m.s.Last4, ExpMonth: m.s.ExpMonth, ExpYear: m.s.ExpYear}
}
