package merchantapi

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/modules/billing"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	schemas "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func (m *merchantAPI) CreateSubscription(ctx context.Context, r api.CreateSubscriptionRequestObject) (api.CreateSubscriptionResponseObject, error) {
	b := r.Body
	in := billing.CreateInput{PriceID: b.PriceId, CustomerName: b.CustomerName, CustomerEmail: b.CustomerEmail,
		Quantity: b.Quantity, TrialDays: b.TrialDays, Metadata: present.MetadataIn(b.Metadata)}
	s, err := m.billing.CreateSubscription(ctx, kit.CallerFrom(ctx), in)
	if err != nil {
		return nil, err
	}
	return api.CreateSubscription200JSONResponse{Body: wire.Subscription(s)}, nil
}

func (m *merchantAPI) ListSubscriptions(ctx context.Context, r api.ListSubscriptionsRequestObject) (api.ListSubscriptionsResponseObject, error) {
	p := r.Params
	f := billing.SubscriptionFilter{Customer: p.Customer, Price: p.Price}
	if p.Status != nil {
		st := billing.Status(*p.Status)
		f.Status = &st
	}
	page, err := m.billing.ListSubscriptions(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore), f)
	if err != nil {
		return nil, err
	}
	out := api.SubscriptionList{Object: schemas.ListObjectList, HasMore: page.HasMore, Url: "/v1/subscriptions",
		Data: make([]api.Subscription, 0, len(page.Items))}
	for _, s := range page.Items {
		out.Data = append(out.Data, wire.Subscription(s))
	}
	return api.ListSubscriptions200JSONResponse{Body: out}, nil
}

func (m *merchantAPI) RetrieveSubscription(ctx context.Context, r api.RetrieveSubscriptionRequestObject) (api.RetrieveSubscriptionResponseObject, error) {
	s, err := m.billing.Subscription(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return api.RetrieveSubscription200JSONResponse{Body: wire.Subscription(s)}, nil
}

func (m *merchantAPI) UpdateSubscription(ctx context.Context, r api.UpdateSubscriptionRequestObject) (api.UpdateSubscriptionResponseObject, error) {
	p := billing.Patch{CancelAtPeriodEnd: r.Body.CancelAtPeriodEnd}
	if r.Body.Metadata != nil {
		p.Metadata = present.MetadataIn(r.Body.Metadata)
	}
	pc := billing.PlanChange{PriceID: r.Body.PriceId, Quantity: r.Body.Quantity}
	if r.Body.ProrationBehavior != nil {
		pc.ProrationBehavior = string(*r.Body.ProrationBehavior)
	}
	if r.Body.Effective != nil {
		pc.Effective = string(*r.Body.Effective)
	}
	var s *billing.Subscription
	var err error
	if pc.Empty() && pc.Effective != billing.EffectivePeriodEnd {
		s, err = m.billing.UpdateSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id, p)
	} else {
		s, err = m.billing.ChangeSubscriptionPlan(ctx, kit.CallerFrom(ctx).Scope, r.Id, pc, p)
	}
	if err != nil {
		return nil, err
	}
	return api.UpdateSubscription200JSONResponse{Body: wire.Subscription(s)}, nil
}

func (m *merchantAPI) CancelSubscription(ctx context.Context, r api.CancelSubscriptionRequestObject) (api.CancelSubscriptionResponseObject, error) {
	atPeriodEnd := true
	if r.Body != nil && r.Body.AtPeriodEnd != nil {
		atPeriodEnd = *r.Body.AtPeriodEnd
	}
	s, err := m.billing.CancelSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id, atPeriodEnd)
	if err != nil {
		return nil, err
	}
	return api.CancelSubscription200JSONResponse{Body: wire.Subscription(s)}, nil
}

func (m *merchantAPI) DeleteSubscriptionPendingUpdate(ctx context.Context, r api.DeleteSubscriptionPendingUpdateRequestObject) (api.DeleteSubscriptionPendingUpdateResponseObject, error) {
	s, err := m.billing.CancelScheduledChange(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return api.DeleteSubscriptionPendingUpdate200JSONResponse{Body: wire.Subscription(s)}, nil
}
