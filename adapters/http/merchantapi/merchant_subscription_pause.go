package merchantapi

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/wire"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

func (m *merchantAPI) PauseSubscription(ctx context.Context, r api.PauseSubscriptionRequestObject) (api.PauseSubscriptionResponseObject, error) {
	var resumesAt *time.Time
	if r.Body != nil && r.Body.ResumesAt != nil {
		t := time.Unix(*r.Body.ResumesAt, 0).UTC()
		resumesAt = &t
	}
	s, err := m.billing.PauseSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id, resumesAt)
	if err != nil {
		return nil, err
	}
	return api.PauseSubscription200JSONResponse{Body: wire.Subscription(s)}, nil
}

func (m *merchantAPI) ResumeSubscription(ctx context.Context, r api.ResumeSubscriptionRequestObject) (api.ResumeSubscriptionResponseObject, error) {
	s, err := m.billing.ResumeSubscription(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return api.ResumeSubscription200JSONResponse{Body: wire.Subscription(s)}, nil
}
