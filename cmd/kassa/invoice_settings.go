package main

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

// invoiceMerchants is the merchant an invoice shows (identity's name) with the invoice number
// prefix the merchant chose in its settings ("" when it chose none: the default applies).
type invoiceMerchants struct {
	identityMerchants
	settings invoicing.SettingsReader
}

func (m invoiceMerchants) InvoiceMerchant(ctx context.Context, merchantID string) (invoicing.Merchant, error) {
	mer, err := m.identityMerchants.InvoiceMerchant(ctx, merchantID)
	if err != nil {
		return invoicing.Merchant{}, err
	}
	prefix, _, err := m.settings.InvoicePrefix(ctx, merchantID)
	if err != nil {
		return invoicing.Merchant{}, err
	}
	mer.InvoicePrefix = prefix
	return mer, nil
}

// invoiceSettings is the dashboard's settings service: the prefix is written in a unit of
// work of its own.
func invoiceSettings(a *app) (*invoicing.SettingsService, error) {
	return invoicing.NewSettingsService(postgres.NewInvoiceSettingsStore(a.db),
		postgres.Bind(a.uow, func(tx *postgres.Tx) invoicing.SettingsTx { return tx }),
		identityMerchants{a.identity}, a.wall, a.testclock)
}
