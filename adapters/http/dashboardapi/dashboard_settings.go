package dashboardapi

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/modules/invoicing"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The merchant's settings (the invoice number prefix), the same in both environments.

var errNoSettings = errors.New("dashboard: the settings service is not wired")

func presentSettings(s invoicing.Settings) dash.Settings {
	out := dash.Settings{Object: dash.SettingsObjectSettings, InvoicePrefix: s.InvoicePrefix,
		DefaultInvoicePrefix: s.DefaultPrefix, NextInvoiceNumber: s.NextNumber}
	if s.Updated != nil {
		u := s.Updated.Unix()
		out.Updated = &u
	}
	return out
}

func (a *dashboardAPI) GetSettings(ctx context.Context, _ dash.GetSettingsRequestObject) (dash.GetSettingsResponseObject, error) {
	if a.d.Settings == nil {
		return nil, errNoSettings
	}
	s, err := a.d.Settings.Get(ctx, kit.CallerFrom(ctx).Scope.MerchantID)
	if err != nil {
		return nil, err
	}
	return dash.GetSettings200JSONResponse{Body: presentSettings(s)}, nil
}

func (a *dashboardAPI) UpdateSettings(ctx context.Context, r dash.UpdateSettingsRequestObject) (dash.UpdateSettingsResponseObject, error) {
	if a.d.Settings == nil {
		return nil, errNoSettings
	}
	prefix := ""
	if r.Body != nil {
		prefix = r.Body.InvoicePrefix
	}
	s, err := a.d.Settings.SetInvoicePrefix(ctx, kit.CallerFrom(ctx).Scope.MerchantID, prefix)
	if err != nil {
		return nil, err
	}
	return dash.UpdateSettings200JSONResponse{Body: presentSettings(s)}, nil
}
