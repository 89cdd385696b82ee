package main

import (
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

// invoiceSettings is the dashboard's settings service: the prefix is written in a unit of
// work of its own.
func invoiceSettings(a *app) (*invoicing.SettingsService, error) {
	return invoicing.NewSettingsService(postgres.NewInvoiceSettingsStore(a.db),
		postgres.Bind(a.uow, func(tx *postgres.Tx) invoicing.SettingsTx { return tx }),
		identityMerchants{a.identity}, a.wall, a.testclock)
}
