package dashboardapi

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/modules/apps"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The merchant's installed apps: one installation serves both environments, so these paths
// have no {env}; the session's merchant decides.

func presentInstallation(i *apps.Installation, appName string) dash.AppInstallation {
	scopes := i.Scopes()
	out := dash.AppInstallation{
		Id: i.ID(), Object: dash.AppInstallationObjectAppInstallation,
		App:    dash.InstalledAppRef{Id: i.AppID(), Name: appName},
		Scopes: make([]dash.GrantedScope, len(scopes)), InstalledAt: i.Created().Unix(), LastUsed: present.UnixPtr(i.LastUsed()),
	}
	for k, sc := range scopes {
		out.Scopes[k] = dash.GrantedScope{Scope: sc, Description: apps.ScopeWords(sc)}
	}
	return out
}

func (a *dashboardAPI) ListInstalledApps(ctx context.Context, _ dash.ListInstalledAppsRequestObject) (dash.ListInstalledAppsResponseObject, error) {
	list, err := a.d.Apps.MerchantInstallations(ctx, kit.CallerFrom(ctx).Scope.MerchantID)
	if err != nil {
		return nil, err
	}
	out := dash.AppInstallationList{Data: make([]dash.AppInstallation, 0, len(list))}
	for _, ia := range list {
		out.Data = append(out.Data, presentInstallation(ia.Installation, ia.AppName))
	}
	return dash.ListInstalledApps200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) UninstallApp(ctx context.Context, r dash.UninstallAppRequestObject) (dash.UninstallAppResponseObject, error) {
	merchant := kit.CallerFrom(ctx).Scope.MerchantID
	i, err := a.d.Apps.UninstallForMerchant(ctx, merchant, r.Installation)
	if err != nil {
		return nil, err
	}
	app, err := a.d.Apps.GetApp(ctx, i.AppID())
	if err != nil {
		return nil, err
	}
	return dash.UninstallApp200JSONResponse{Body: presentInstallation(i, app.Name())}, nil
}

// appDeliveriesShown is how many recent deliveries the Apps page shows per installed app.
const appDeliveriesShown = 20

func (a *dashboardAPI) ListAppDeliveries(ctx context.Context, r dash.ListAppDeliveriesRequestObject) (dash.ListAppDeliveriesResponseObject, error) {
	merchant := kit.CallerFrom(ctx).Scope.MerchantID
	i, err := a.d.Apps.GetInstallation(ctx, r.Params.Installation)
	if err != nil {
		return nil, err
	}
	if i.MerchantID() != merchant {
		return nil, apps.ErrInstallationMissing.At("installation").Msg("No such installation: '%s'.", r.Params.Installation)
	}
	out := dash.AppDeliveryList{Data: []dash.AppDelivery{}}
	if a.d.AppHooks == nil {
		return dash.ListAppDeliveries200JSONResponse{Body: out}, nil
	}
	list, _, err := a.d.AppHooks.ListDeliveries(ctx, i.AppID(), i.ID(), appDeliveriesShown, 0)
	if err != nil {
		return nil, err
	}
	for _, d := range list {
		out.Data = append(out.Data, dash.AppDelivery{Id: d.ID, Object: dash.AppDeliveryObjectAppDelivery, Event: d.EventID,
			EventType: d.EventType, Environment: dash.AppDeliveryEnvironment(d.Scope.Env), Status: dash.AppDeliveryStatus(d.Status),
			Attempts: d.Attempts, Created: d.Created.Unix(), LastAttemptAt: present.UnixPtr(d.LastAttemptAt)})
	}
	return dash.ListAppDeliveries200JSONResponse{Body: out}, nil
}
