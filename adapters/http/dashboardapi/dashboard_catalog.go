package dashboardapi

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/modules/catalog"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Products and prices of the path's environment, through the catalog use cases the merchant
// API calls (same rules, same errors).

func (a *dashboardAPI) ListProducts(ctx context.Context, r dash.ListProductsRequestObject) (dash.ListProductsResponseObject, error) {
	p := r.Params
	page, err := a.d.Catalog.ListProducts(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore), p.Active)
	if err != nil {
		return nil, err
	}
	out := dash.ProductList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/products",
		Data: make([]dash.Product, 0, len(page.Items))}
	for _, pr := range page.Items {
		out.Data = append(out.Data, present.Product(pr))
	}
	return dash.ListProducts200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) CreateProduct(ctx context.Context, r dash.CreateProductRequestObject) (dash.CreateProductResponseObject, error) {
	in := catalog.ProductInput{Name: r.Body.Name, Description: r.Body.Description, Metadata: present.MetadataIn(r.Body.Metadata)}
	p, err := a.d.Catalog.CreateProduct(ctx, kit.CallerFrom(ctx).Scope, in, nil)
	if err != nil {
		return nil, err
	}
	return dash.CreateProduct201JSONResponse{Body: present.Product(p)}, nil
}

func (a *dashboardAPI) GetProduct(ctx context.Context, r dash.GetProductRequestObject) (dash.GetProductResponseObject, error) {
	p, err := a.d.Catalog.GetProduct(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.GetProduct200JSONResponse{Body: present.Product(p)}, nil
}

func (a *dashboardAPI) ArchiveProduct(ctx context.Context, r dash.ArchiveProductRequestObject) (dash.ArchiveProductResponseObject, error) {
	p, err := a.d.Catalog.ArchiveProduct(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return dash.ArchiveProduct200JSONResponse{Body: present.Product(p)}, nil
}

func (a *dashboardAPI) ListPrices(ctx context.Context, r dash.ListPricesRequestObject) (dash.ListPricesResponseObject, error) {
	p := r.Params
	page, err := a.d.Catalog.ListPrices(ctx, kit.CallerFrom(ctx).Scope, r.Id, present.ListQuery(p.Limit, p.StartingAfter, p.EndingBefore), p.Active)
	if err != nil {
		return nil, err
	}
	out := dash.PriceList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/api/v1/" + string(r.Env) + "/products/" + r.Id + "/prices",
		Data: make([]dash.Price, 0, len(page.Items))}
	for _, pr := range page.Items {
		out.Data = append(out.Data, present.Price(pr))
	}
	return dash.ListPrices200JSONResponse{Body: out}, nil
}

func (a *dashboardAPI) CreatePrice(ctx context.Context, r dash.CreatePriceRequestObject) (dash.CreatePriceResponseObject, error) {
	b := r.Body
	in := catalog.PriceInput{Currency: b.Currency, UnitAmount: b.UnitAmount, Nickname: b.Nickname}
	if rc := b.Recurring; rc != nil {
		in.Recurring = &catalog.Recurring{Interval: string(rc.Interval), TrialPeriodDays: rc.TrialPeriodDays}
		if rc.IntervalCount != nil {
			in.Recurring.IntervalCount = *rc.IntervalCount
		}
		if rc.UsageType != nil {
			in.Recurring.UsageType = string(*rc.UsageType)
		}
	}
	p, err := a.d.Catalog.CreatePrice(ctx, kit.CallerFrom(ctx).Scope, r.Id, in, b.SetAsDefault != nil && *b.SetAsDefault)
	if err != nil {
		return nil, err
	}
	return dash.CreatePrice201JSONResponse{Body: present.Price(p)}, nil
}

func (a *dashboardAPI) ArchivePrice(ctx context.Context, r dash.ArchivePriceRequestObject) (dash.ArchivePriceResponseObject, error) {
	scope := kit.CallerFrom(ctx).Scope
	found, err := a.d.Catalog.FindPrice(ctx, scope, r.Id)
	if err != nil {
		return nil, withParam(err, "id")
	}
	inactive := false
	p, err := a.d.Catalog.UpdatePrice(ctx, scope, found.ProductID(), r.Id, catalog.PricePatch{Active: &inactive})
	if err != nil {
		return nil, err
	}
	return dash.ArchivePrice200JSONResponse{Body: present.Price(p)}, nil
}
