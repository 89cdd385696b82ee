package billing

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// Limits of a customer (interface 8).
const (
	MinNameLength = 2
	MaxNameLength = 120
	MaxEmailBytes = 254
)

// Customer is the payer of subscriptions (cus_…): one per e-mail address in a merchant
// environment.
type Customer struct {
	s CustomerSnapshot
}

// CustomerSnapshot is a customer's full state, for storage (Snapshot, RehydrateCustomer).
type CustomerSnapshot struct {
	ID    string
	Scope core.Scope
	Name  string
	Email string
	// EmailKey is the e-mail the customer is found by: trimmed and lower case.
	EmailKey string
	// ProcessorRef is the processor's customer (ports.SetupResult.CustomerRef), "" until the
	// first method is saved.
	ProcessorRef string
	// DefaultPaymentMethod is the pm_ id later charges use, or nil.
	DefaultPaymentMethod *string
	Created, Updated     time.Time
}

// EmailKey is the form an e-mail address is looked up by.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CheckName checks a customer name (2 to 120 characters) at param.
func CheckName(name, param string) error {
	n := utf8.RuneCountInString(strings.TrimSpace(name))
	if !utf8.ValidString(name) || n < MinNameLength || n > MaxNameLength {
		return core.InvalidField(param, "%s must be %d to %d characters.", param, MinNameLength, MaxNameLength)
	}
	return nil
}

// CheckEmail checks a customer e-mail address at param.
func CheckEmail(email, param string) error {
	e := strings.TrimSpace(email)
	if len(e) > MaxEmailBytes || !core.ValidEmail(e) {
		return core.InvalidField(param, "%s must be a valid e-mail address.", param)
	}
	return nil
}

// NewCustomer checks the name and e-mail (reported at the request fields customer_name and
// customer_email) and returns a new customer of scope.
func NewCustomer(scope core.Scope, name, email string, now time.Time) (*Customer, error) {
	if email == "" {
		return nil, core.MissingField("customer_email")
	}
	if name == "" {
		return nil, core.MissingField("customer_name")
	}
	if err := CheckName(name, "customer_name"); err != nil {
		return nil, err
	}
	if err := CheckEmail(email, "customer_email"); err != nil {
		return nil, err
	}
	now = now.UTC()
	return &Customer{s: CustomerSnapshot{ID: core.NewID("cus_"), Scope: scope, Name: strings.TrimSpace(name),
		Email: strings.TrimSpace(email), EmailKey: EmailKey(email), Created: now, Updated: now}}, nil
}

// RehydrateCustomer rebuilds a stored customer without re-validating it.
func RehydrateCustomer(s CustomerSnapshot) *Customer {
	s.DefaultPaymentMethod = copyString(s.DefaultPaymentMethod)
	return &Customer{s: s}
}

// Snapshot returns a copy of the customer's state.
func (c *Customer) Snapshot() CustomerSnapshot {
	s := c.s
	s.DefaultPaymentMethod = copyString(s.DefaultPaymentMethod)
	return s
}

func (c *Customer) ID() string           { return c.s.ID }
func (c *Customer) Scope() core.Scope    { return c.s.Scope }
func (c *Customer) Name() string         { return c.s.Name }
func (c *Customer) Email() string        { return c.s.Email }
func (c *Customer) ProcessorRef() string { return c.s.ProcessorRef }
func (c *Customer) Created() time.Time   { return c.s.Created }

// DefaultPaymentMethod is the id of the method later charges use, or nil.
func (c *Customer) DefaultPaymentMethod() *string { return copyString(c.s.DefaultPaymentMethod) }

// AttachMethod records that pm, saved for this customer, exists: the processor's customer it
// was saved under is kept, and it becomes the default when makeDefault is set or when the
// customer has none.
func (c *Customer) AttachMethod(pm *PaymentMethod, processorCustomer string, makeDefault bool, now time.Time) error {
	if pm.Customer() != c.s.ID || pm.Scope() != c.s.Scope {
		return ErrPaymentMethodNotFound
	}
	if processorCustomer != "" && c.s.ProcessorRef == "" {
		c.s.ProcessorRef = processorCustomer
	}
	if makeDefault || c.s.DefaultPaymentMethod == nil {
		id := pm.ID()
		c.s.DefaultPaymentMethod = &id
	}
	c.s.Updated = now.UTC()
	return nil
}

func copyString(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
