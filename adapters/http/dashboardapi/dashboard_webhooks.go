package dashboardapi

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/modules/webhooks"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// Webhook endpoints, their delivery log, redelivery and test events (D10), over
// webhooks.Service. A secret is rendered only by create and rotate_secret, which return it
// from the use case; no presenter here reads one. The module's not-found errors already name
// the path parameter (`id`).

func presentDashEndpoint(e *webhooks.Endpoint) dash.WebhookEndpoint {
	out := dash.WebhookEndpoint{
		Id: e.ID(), Object: dash.WebhookEndpointObjectWebhookEndpoint, Mode: dash.DashboardEnvironment(e.Scope().Env),
		Url: e.URL(), EnabledEvents: e.EnabledEvents(), Description: e.Description(),
		Status: dash.WebhookEndpointStatus(e.Status()), FailingSince: present.UnixPtr(e.FailingSince()),
		PreviousSecretExpiresAt: present.UnixPtr(e.PreviousSecretExpiresAt(time.Now())), Created: e.Created().Unix(),
		SecretUnavailable: e.SecretUnavailable(),
	}
	if r := e.DisabledReason(); r != "" {
		dr := dash.WebhookEndpointDisabledReason(r)
		out.DisabledReason = &dr
	}
	return out
}

func presentDashEndpointSecret(e *webhooks.Endpoint, secret string) dash.WebhookEndpointWithSecret {
	p := presentDashEndpoint(e)
	out := dash.WebhookEndpointWithSecret{
		Id: p.Id, Object: dash.WebhookEndpointWithSecretObjectWebhookEndpoint, Mode: p.Mode, Url: p.Url,
		EnabledEvents: p.EnabledEvents, Description: p.Description, Status: dash.WebhookEndpointWithSecretStatus(p.Status),
		FailingSince: p.FailingSince, PreviousSecretExpiresAt: p.PreviousSecretExpiresAt, Created: p.Created, Secret: secret,
		SecretUnavailable: p.SecretUnavailable,
	}
	if p.DisabledReason != nil {
		dr := dash.WebhookEndpointWithSecretDisabledReason(*p.DisabledReason)
		out.DisabledReason = &dr
	}
	return out
}

func presentDashDelivery(d *webhooks.Delivery) dash.WebhookDelivery {
	return dash.WebhookDelivery{
		Id: d.ID, Object: dash.WebhookDeliveryObjectWebhookDelivery, EndpointId: d.EndpointID, EventId: d.EventID,
		EventType: d.EventType, Status: dash.WebhookDeliveryStatus(d.Status), Attempts: d.Attempts,
		NextAttemptAt: present.UnixPtr(d.NextAttemptAt), Created: d.Created.Unix(), LastAttemptAt: present.UnixPtr(d.LastAttemptAt),
		CompletedAt: present.UnixPtr(d.CompletedAt),
	}
}

func presentDashAttempt(a webhooks.Attempt) dash.WebhookAttempt {
	out := dash.WebhookAttempt{Number: a.Number, StartedAt: a.StartedAt.Unix(), LatencyMs: a.Outcome.Latency.Milliseconds(),
		ResponseExcerpt: a.Outcome.Excerpt}
	if a.Outcome.StatusCode != 0 {
		code := a.Outcome.StatusCode
		out.StatusCode = &code
	}
	if a.Outcome.Err != "" {
		msg := a.Outcome.Err
		out.Error = &msg
	}
	return out
}

func (a *dashboardAPI) ListWebhookEndpoints(ctx context.Context, _ dash.ListWebhookEndpointsRequestObject) (dash.ListWebhookEndpointsResponseObject, error) {
	eps, err := a.d.Webhooks.ListEndpoints(ctx, kit.CallerFrom(ctx).Scope)
	if err != nil {
		return nil, err
	}
	out := dash.WebhookEndpointList{Data: make([]dash.WebhookEndpoint, 0, len(eps))}
	for _, e := range eps {
		out.Data = append(out.Data, presentDashEndpoint(e))
	}
	return dash.ListWebhookEndpoints200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) CreateWebhookEndpoint(ctx context.Context, r dash.CreateWebhookEndpointRequestObject) (dash.CreateWebhookEndpointResponseObject, error) {
	p := webhooks.EndpointParams{URL: r.Body.Url, EnabledEvents: r.Body.EnabledEvents}
	if r.Body.Description != nil {
		p.Description = *r.Body.Description
	}
	e, secret, err := a.d.Webhooks.CreateEndpoint(ctx, kit.CallerFrom(ctx).Scope, p)
	if err != nil {
		return nil, err
	}
	return dash.CreateWebhookEndpoint201JSONResponse{Body: presentDashEndpointSecret(e, secret)}, nil
}

func (a *dashboardAPI) GetWebhookEndpoint(ctx context.Context, r dash.GetWebhookEndpointRequestObject) (dash.GetWebhookEndpointResponseObject, error) {
	e, err := a.d.Webhooks.GetEndpoint(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.GetWebhookEndpoint200JSONResponse{Body: presentDashEndpoint(e)}, nil
}

func (a *dashboardAPI) UpdateWebhookEndpoint(ctx context.Context, r dash.UpdateWebhookEndpointRequestObject) (dash.UpdateWebhookEndpointResponseObject, error) {
	e, err := a.d.Webhooks.ChangeEndpoint(ctx, kit.CallerFrom(ctx).Scope, r.Id, webhooks.EndpointChanges{
		URL: r.Body.Url, EnabledEvents: r.Body.EnabledEvents, Description: r.Body.Description,
	})
	if err != nil {
		return nil, err
	}
	return dash.UpdateWebhookEndpoint200JSONResponse{Body: presentDashEndpoint(e)}, nil
}

func (a *dashboardAPI) DeleteWebhookEndpoint(ctx context.Context, r dash.DeleteWebhookEndpointRequestObject) (dash.DeleteWebhookEndpointResponseObject, error) {
	if err := a.d.Webhooks.DeleteEndpoint(ctx, kit.CallerFrom(ctx).Scope, r.Id); err != nil {
		return nil, err
	}
	return dash.DeleteWebhookEndpoint204Response{}, nil
}

func (a *dashboardAPI) RotateWebhookEndpointSecret(ctx context.Context, r dash.RotateWebhookEndpointSecretRequestObject) (dash.RotateWebhookEndpointSecretResponseObject, error) {
	e, secret, err := a.d.Webhooks.RotateSecret(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.RotateWebhookEndpointSecret200JSONResponse{Body: presentDashEndpointSecret(e, secret)}, nil
}

func (a *dashboardAPI) DisableWebhookEndpoint(ctx context.Context, r dash.DisableWebhookEndpointRequestObject) (dash.DisableWebhookEndpointResponseObject, error) {
	e, err := a.d.Webhooks.DisableEndpoint(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.DisableWebhookEndpoint200JSONResponse{Body: presentDashEndpoint(e)}, nil
}

func (a *dashboardAPI) EnableWebhookEndpoint(ctx context.Context, r dash.EnableWebhookEndpointRequestObject) (dash.EnableWebhookEndpointResponseObject, error) {
	e, err := a.d.Webhooks.EnableEndpoint(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.EnableWebhookEndpoint200JSONResponse{Body: presentDashEndpoint(e)}, nil
}

func (a *dashboardAPI) SendWebhookTestEvent(ctx context.Context, r dash.SendWebhookTestEventRequestObject) (dash.SendWebhookTestEventResponseObject, error) {
	d, err := a.d.Webhooks.SendTestEvent(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.SendWebhookTestEvent202JSONResponse{Body: presentDashDelivery(d)}, nil
}

func (a *dashboardAPI) ListWebhookDeliveries(ctx context.Context, r dash.ListWebhookDeliveriesRequestObject) (dash.ListWebhookDeliveriesResponseObject, error) {
	page, err := a.d.Webhooks.ListDeliveries(ctx, kit.CallerFrom(ctx).Scope, r.Id,
		present.ListQuery(r.Params.Limit, r.Params.StartingAfter, r.Params.EndingBefore))
	if err != nil {
		return nil, err
	}
	out := dash.WebhookDeliveryList{Object: dash.WebhookDeliveryListObjectList, HasMore: page.HasMore,
		Url: "/api/v1/" + string(r.Env) + "/webhook_endpoints/" + r.Id + "/deliveries", Data: make([]dash.WebhookDelivery, 0, len(page.Items))}
	for _, d := range page.Items {
		out.Data = append(out.Data, presentDashDelivery(d))
	}
	return dash.ListWebhookDeliveries200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) GetWebhookDelivery(ctx context.Context, r dash.GetWebhookDeliveryRequestObject) (dash.GetWebhookDeliveryResponseObject, error) {
	d, err := a.d.Webhooks.GetDelivery(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	out := dash.WebhookDeliveryDetail{Delivery: presentDashDelivery(&d.Delivery), Attempts: make([]dash.WebhookAttempt, 0, len(d.AttemptLog))}
	for _, at := range d.AttemptLog {
		out.Attempts = append(out.Attempts, presentDashAttempt(at))
	}
	return dash.GetWebhookDelivery200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) RedeliverWebhookDelivery(ctx context.Context, r dash.RedeliverWebhookDeliveryRequestObject) (dash.RedeliverWebhookDeliveryResponseObject, error) {
	d, err := a.d.Webhooks.Redeliver(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.RedeliverWebhookDelivery202JSONResponse{Body: presentDashDelivery(d)}, nil
}
