package merchantapi

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/modules/checkout"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func (m *merchantAPI) CreateCheckoutSession(ctx context.Context, r api.CreateCheckoutSessionRequestObject) (api.CreateCheckoutSessionResponseObject, error) {
	b := r.Body
	in := checkout.CreateInput{
		Amount: b.Amount, Currency: b.Currency, CustomerName: b.CustomerName, CustomerEmail: b.CustomerEmail,
		Reference: b.Reference, Description: b.Description, SuccessURL: b.SuccessUrl, CancelURL: b.CancelUrl,
		Metadata: present.MetadataIn(b.Metadata),
	}
	if b.Mode != nil {
		in.Mode = string(*b.Mode)
	}
	if b.LineItems != nil {
		for _, li := range *b.LineItems {
			item := checkout.LineItem{Name: li.Name, Amount: li.Amount, ImageURL: li.ImageUrl, PriceID: li.PriceId, ProductID: li.ProductId}
			if li.Quantity != nil {
				item.Quantity = *li.Quantity
			}
			in.LineItems = append(in.LineItems, item)
		}
	}
	s, err := m.checkout.Create(ctx, kit.CallerFrom(ctx), in)
	if err != nil {
		return nil, err
	}
	return api.CreateCheckoutSession200JSONResponse{Body: render.Session(s)}, nil
}

func (m *merchantAPI) ListCheckoutSessions(ctx context.Context, r api.ListCheckoutSessionsRequestObject) (api.ListCheckoutSessionsResponseObject, error) {
	status := ""
	if r.Params.Status != nil {
		status = string(*r.Params.Status)
	}
	page, err := m.checkout.List(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(r.Params.Limit, r.Params.StartingAfter, r.Params.EndingBefore), status)
	if err != nil {
		return nil, err
	}
	out := api.CheckoutSessionList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/v1/checkout/sessions",
		Data: make([]api.CheckoutSession, 0, len(page.Items))}
	for _, s := range page.Items {
		out.Data = append(out.Data, render.Session(s))
	}
	return api.ListCheckoutSessions200JSONResponse{Body: out}, nil
}

func (m *merchantAPI) RetrieveCheckoutSession(ctx context.Context, r api.RetrieveCheckoutSessionRequestObject) (api.RetrieveCheckoutSessionResponseObject, error) {
	s, err := m.checkout.Get(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return api.RetrieveCheckoutSession200JSONResponse{Body: render.Session(s)}, nil
}

func (m *merchantAPI) ExpireCheckoutSession(ctx context.Context, r api.ExpireCheckoutSessionRequestObject) (api.ExpireCheckoutSessionResponseObject, error) {
	s, err := m.checkout.Expire(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return api.ExpireCheckoutSession200JSONResponse{Body: render.Session(s)}, nil
}
