package operatorapi

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/modules/webhooks"
	op "github.com/kassa-pay/kassa/openapi/gen/operatorapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// The webhook endpoints of apps and their deliveries: the app is looked up first (404
// app_not_found), then its endpoint or delivery (another app's is not found).

func (o *operatorAPI) appExists(ctx context.Context, id string) error {
	_, err := o.apps.GetApp(ctx, id)
	return err
}

func (o *operatorAPI) CreateAppWebhookEndpoint(ctx context.Context, r op.CreateAppWebhookEndpointRequestObject) (op.CreateAppWebhookEndpointResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	p := webhooks.AppEndpointParams{URL: r.Body.Url, Events: r.Body.Events}
	if r.Body.Description != nil {
		p.Description = *r.Body.Description
	}
	e, err := o.appHooks.CreateEndpoint(ctx, r.Id, p)
	if err != nil {
		return nil, err
	}
	v := presentAppEndpoint(e)
	return op.CreateAppWebhookEndpoint201JSONResponse{Body: op.AppWebhookEndpointCreated{
		Id: v.Id, Object: op.AppWebhookEndpointCreatedObjectAppWebhookEndpoint, App: v.App, Url: v.Url, Events: v.Events,
		Description: v.Description, Created: v.Created, Secret: e.Secret,
	}}, nil
}

func (o *operatorAPI) ListAppWebhookEndpoints(ctx context.Context, r op.ListAppWebhookEndpointsRequestObject) (op.ListAppWebhookEndpointsResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	list, err := o.appHooks.ListEndpoints(ctx, r.Id)
	if err != nil {
		return nil, err
	}
	out := op.AppWebhookEndpointList{Object: wire.ListObjectList, Url: "/operator/v1/apps/" + r.Id + "/webhook_endpoints",
		Data: make([]op.AppWebhookEndpoint, 0, len(list))}
	for _, e := range list {
		out.Data = append(out.Data, presentAppEndpoint(e))
	}
	return op.ListAppWebhookEndpoints200JSONResponse{Body: out}, nil
}

func (o *operatorAPI) RetrieveAppWebhookEndpoint(ctx context.Context, r op.RetrieveAppWebhookEndpointRequestObject) (op.RetrieveAppWebhookEndpointResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	e, err := o.appHooks.GetEndpoint(ctx, r.Id, r.Endpoint)
	if err != nil {
		return nil, err
	}
	return op.RetrieveAppWebhookEndpoint200JSONResponse{Body: presentAppEndpoint(e)}, nil
}

func (o *operatorAPI) UpdateAppWebhookEndpoint(ctx context.Context, r op.UpdateAppWebhookEndpointRequestObject) (op.UpdateAppWebhookEndpointResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	c := webhooks.AppEndpointChange{URL: r.Body.Url, Description: r.Body.Description}
	if r.Body.Events != nil {
		c.Events = *r.Body.Events
	}
	e, err := o.appHooks.UpdateEndpoint(ctx, r.Id, r.Endpoint, c)
	if err != nil {
		return nil, err
	}
	return op.UpdateAppWebhookEndpoint200JSONResponse{Body: presentAppEndpoint(e)}, nil
}

func (o *operatorAPI) DeleteAppWebhookEndpoint(ctx context.Context, r op.DeleteAppWebhookEndpointRequestObject) (op.DeleteAppWebhookEndpointResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	if err := o.appHooks.DeleteEndpoint(ctx, r.Id, r.Endpoint); err != nil {
		return nil, err
	}
	return op.DeleteAppWebhookEndpoint200JSONResponse{Body: op.DeletedAppWebhookEndpoint{
		Id: r.Endpoint, Object: op.DeletedAppWebhookEndpointObjectAppWebhookEndpoint, Deleted: true}}, nil
}

func (o *operatorAPI) ListAppWebhookDeliveries(ctx context.Context, r op.ListAppWebhookDeliveriesRequestObject) (op.ListAppWebhookDeliveriesResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	limit, offset, installation := 0, 0, ""
	if r.Params.Limit != nil {
		limit = *r.Params.Limit
	}
	if r.Params.Offset != nil {
		offset = *r.Params.Offset
	}
	if r.Params.Installation != nil {
		installation = *r.Params.Installation
	}
	list, more, err := o.appHooks.ListDeliveries(ctx, r.Id, installation, limit, offset)
	if err != nil {
		return nil, err
	}
	out := op.AppWebhookDeliveryList{Object: wire.ListObjectList, Url: "/operator/v1/apps/" + r.Id + "/webhook_deliveries",
		HasMore: more, Data: make([]op.AppWebhookDelivery, 0, len(list))}
	for _, d := range list {
		out.Data = append(out.Data, presentAppDelivery(d))
	}
	return op.ListAppWebhookDeliveries200JSONResponse{Body: out}, nil
}

func (o *operatorAPI) RetrieveAppWebhookDelivery(ctx context.Context, r op.RetrieveAppWebhookDeliveryRequestObject) (op.RetrieveAppWebhookDeliveryResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	d, err := o.appHooks.GetDelivery(ctx, r.Id, r.Delivery)
	if err != nil {
		return nil, err
	}
	v := presentAppDelivery(&d.AppDelivery)
	out := op.AppWebhookDeliveryDetail{
		Id: v.Id, Object: op.AppWebhookDeliveryDetailObjectAppWebhookDelivery, Endpoint: v.Endpoint, Installation: v.Installation,
		Merchant: v.Merchant, Environment: v.Environment, Event: v.Event, EventType: v.EventType,
		Status: op.AppWebhookDeliveryDetailStatus(v.Status), Attempts: v.Attempts, NextAttemptAt: v.NextAttemptAt,
		Created: v.Created, LastAttemptAt: v.LastAttemptAt, CompletedAt: v.CompletedAt,
		AttemptLog: make([]op.AppWebhookAttempt, 0, len(d.AttemptLog)),
	}
	for _, a := range d.AttemptLog {
		x := op.AppWebhookAttempt{Attempt: a.Number, StartedAt: a.StartedAt.Unix(), LatencyMs: int(a.Outcome.Latency / time.Millisecond),
			ResponseExcerpt: a.Outcome.Excerpt}
		if a.Outcome.StatusCode != 0 {
			code := a.Outcome.StatusCode
			x.StatusCode = &code
		}
		if a.Outcome.Err != "" {
			e := a.Outcome.Err
			x.Error = &e
		}
		out.AttemptLog = append(out.AttemptLog, x)
	}
	return op.RetrieveAppWebhookDelivery200JSONResponse{Body: out}, nil
}

func (o *operatorAPI) RedeliverAppWebhookDelivery(ctx context.Context, r op.RedeliverAppWebhookDeliveryRequestObject) (op.RedeliverAppWebhookDeliveryResponseObject, error) {
	if err := o.appExists(ctx, r.Id); err != nil {
		return nil, err
	}
	d, err := o.appHooks.Redeliver(ctx, r.Id, r.Delivery)
	if err != nil {
		return nil, err
	}
	return op.RedeliverAppWebhookDelivery200JSONResponse{Body: presentAppDelivery(d)}, nil
}

func presentAppEndpoint(e *webhooks.AppEndpoint) op.AppWebhookEndpoint {
	return op.AppWebhookEndpoint{Id: e.ID, Object: op.AppWebhookEndpointObjectAppWebhookEndpoint, App: e.AppID, Url: e.URL,
		Events: e.Events, Description: e.Description, Created: e.Created.Unix()}
}

func presentAppDelivery(d *webhooks.AppDelivery) op.AppWebhookDelivery {
	return op.AppWebhookDelivery{
		Id: d.ID, Object: op.AppWebhookDeliveryObjectAppWebhookDelivery, Endpoint: d.EndpointID, Installation: d.Installation,
		Merchant: d.Scope.MerchantID, Environment: op.Environment(d.Scope.Env), Event: d.EventID, EventType: d.EventType,
		Status: op.AppWebhookDeliveryStatus(d.Status), Attempts: d.Attempts, NextAttemptAt: present.UnixPtr(d.NextAttemptAt),
		Created: d.Created.Unix(), LastAttemptAt: present.UnixPtr(d.LastAttemptAt), CompletedAt: present.UnixPtr(d.CompletedAt),
	}
}
