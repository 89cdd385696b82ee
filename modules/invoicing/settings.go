package invoicing

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// ErrPrefixInvalid: an invoice number prefix is 3 to 12 upper-case letters or digits.
var ErrPrefixInvalid = core.NewError(core.TypeInvalidRequest, "invoice_prefix_invalid", "invoice_prefix",
	"The invoice number prefix must be 3 to 12 upper-case letters (A-Z) or digits.")

var prefixPattern = regexp.MustCompile(`^[A-Z0-9]{3,12}$`)

// ValidPrefix reports whether p may prefix invoice numbers: 3 to 12 of A–Z and 0–9.
func ValidPrefix(p string) bool { return prefixPattern.MatchString(p) }

// Settings are a merchant's invoicing settings, the same in both environments.
type Settings struct {
	// InvoicePrefix is the prefix the merchant's next invoice number takes.
	InvoicePrefix string
	// DefaultPrefix is the prefix made from the merchant's name (DefaultPrefix), which
	// InvoicePrefix is until the merchant chooses another.
	DefaultPrefix string
	// Updated is when the merchant last chose a prefix (nil: never).
	Updated *time.Time
	// NextNumber is the number the next invoice sent in test mode would take now.
	NextNumber string
}

// SettingsReader reads a merchant's chosen prefix outside any transaction ("" when it chose
// none).
type SettingsReader interface {
	InvoicePrefix(ctx context.Context, merchantID string) (prefix string, updated *time.Time, err error)
	// LastNumber is the last sequence number taken in the scope and year (0: none yet).
	LastNumber(ctx context.Context, scope core.Scope, year int) (int64, error)
}

// SettingsRepository reads and writes a merchant's settings on the transaction of a unit of
// work.
type SettingsRepository interface {
	SetInvoicePrefix(ctx context.Context, merchantID, prefix string, now time.Time) error
	// ChosenPrefix reads the merchant's chosen prefix ("" when it chose none) and its name,
	// which the default prefix is made from.
	ChosenPrefix(ctx context.Context, merchantID string) (prefix, merchantName string, err error)
}

// SettingsTx is what the settings' unit of work writes through.
type SettingsTx interface {
	InvoiceSettings() SettingsRepository
}

// SettingsService reads and changes a merchant's invoicing settings (the dashboard's Settings
// page). Invoices read the prefix through their Merchants port when they are sent.
type SettingsService struct {
	read      SettingsReader
	uow       ports.UnitOfWorkOf[SettingsTx]
	merchants Merchants
	clock     core.Clock
	clocks    ports.Clocks
}

// NewSettingsService needs the reader, the unit of work, the merchants (for the name the
// default prefix is made from), the wall clock (when a prefix was chosen) and the
// environments' clocks (the year of the next number).
func NewSettingsService(read SettingsReader, uow ports.UnitOfWorkOf[SettingsTx], merchants Merchants, clock core.Clock, clocks ports.Clocks) (*SettingsService, error) {
	if read == nil || uow == nil || merchants == nil || clock == nil || clocks == nil {
		return nil, errors.New("invoicing: the settings need a reader, a unit of work, merchants and clocks")
	}
	return &SettingsService{read: read, uow: uow, merchants: merchants, clock: clock, clocks: clocks}, nil
}

// Get answers the merchant's settings.
func (s *SettingsService) Get(ctx context.Context, merchantID string) (Settings, error) {
	m, err := s.merchants.InvoiceMerchant(ctx, merchantID)
	if err != nil {
		return Settings{}, err
	}
	p, updated, err := s.read.InvoicePrefix(ctx, merchantID)
	if err != nil {
		return Settings{}, err
	}
	out := Settings{InvoicePrefix: p, DefaultPrefix: DefaultPrefix(m.Name), Updated: updated}
	if out.InvoicePrefix == "" {
		out.InvoicePrefix = out.DefaultPrefix
	}
	test := core.Scope{MerchantID: merchantID, Env: core.EnvTest}
	now, err := s.clocks.Now(ctx, test)
	if err != nil {
		return Settings{}, err
	}
	last, err := s.read.LastNumber(ctx, test, now.Year())
	if err != nil {
		return Settings{}, err
	}
	out.NextNumber = FormatNumber(out.InvoicePrefix, now.Year(), last+1)
	return out, nil
}

// SetInvoicePrefix makes prefix the merchant's (400 invoice_prefix_invalid, param
// invoice_prefix, unless 3 to 12 upper-case letters or digits). Invoices sent from then on
// take it; those sent before keep their numbers, and the sequence of the year goes on.
func (s *SettingsService) SetInvoicePrefix(ctx context.Context, merchantID, prefix string) (Settings, error) {
	if !ValidPrefix(prefix) {
		return Settings{}, ErrPrefixInvalid
	}
	now := s.clock.Now()
	if err := s.uow.Do(ctx, func(ctx context.Context, tx SettingsTx) error {
		return tx.InvoiceSettings().SetInvoicePrefix(ctx, merchantID, prefix, now)
	}); err != nil {
		return Settings{}, err
	}
	return s.Get(ctx, merchantID)
}
