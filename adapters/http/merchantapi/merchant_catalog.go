package merchantapi

import (
	"context"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/modules/catalog"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

func (m *merchantAPI) CreateProduct(ctx context.Context, r api.CreateProductRequestObject) (api.CreateProductResponseObject, error) {
	b := r.Body
	in := catalog.ProductInput{
		Name: b.Name, Description: b.Description, TaxCode: b.TaxCode, UnitLabel: b.UnitLabel,
		StatementDescriptor: b.StatementDescriptor, URL: b.Url, Shippable: b.Shippable,
		PackageDimensions: dimensionsIn(b.PackageDimensions), Metadata: present.MetadataIn(b.Metadata), Active: b.Active,
	}
	if b.Images != nil {
		in.Images = *b.Images
	}
	if b.Tags != nil {
		in.Tags = *b.Tags
	}
	var price *catalog.PriceInput
	if p := b.Price; p != nil {
		price = &catalog.PriceInput{Currency: p.Currency, UnitAmount: p.UnitAmount, Nickname: p.Nickname,
			LookupKey: p.LookupKey, TaxBehavior: taxBehaviorIn(p.TaxBehavior), Recurring: recurringIn(p.Recurring),
			Metadata: present.MetadataIn(p.Metadata)}
	}
	p, err := m.catalog.CreateProduct(ctx, kit.CallerFrom(ctx).Scope, in, price)
	if err != nil {
		return nil, err
	}
	return api.CreateProduct200JSONResponse{Body: present.Product(p)}, nil
}

func (m *merchantAPI) ListProducts(ctx context.Context, r api.ListProductsRequestObject) (api.ListProductsResponseObject, error) {
	page, err := m.catalog.ListProducts(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(r.Params.Limit, r.Params.StartingAfter, r.Params.EndingBefore), r.Params.Active)
	if err != nil {
		return nil, err
	}
	out := api.ProductList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/v1/products", Data: make([]api.Product, 0, len(page.Items))}
	for _, p := range page.Items {
		out.Data = append(out.Data, present.Product(p))
	}
	return api.ListProducts200JSONResponse{Body: out}, nil
}

func (m *merchantAPI) RetrieveProduct(ctx context.Context, r api.RetrieveProductRequestObject) (api.RetrieveProductResponseObject, error) {
	p, err := m.catalog.GetProduct(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return api.RetrieveProduct200JSONResponse{Body: present.Product(p)}, nil
}

func (m *merchantAPI) UpdateProduct(ctx context.Context, r api.UpdateProductRequestObject) (api.UpdateProductResponseObject, error) {
	b := r.Body
	patch := catalog.ProductPatch{
		Name: b.Name, Description: b.Description, TaxCode: b.TaxCode, UnitLabel: b.UnitLabel,
		StatementDescriptor: b.StatementDescriptor, URL: b.Url, Images: b.Images, Tags: b.Tags,
		Shippable: b.Shippable, PackageDimensions: dimensionsIn(b.PackageDimensions),
		Metadata: present.MetadataIn(b.Metadata), Active: b.Active, DefaultPrice: b.DefaultPrice,
	}
	p, err := m.catalog.UpdateProduct(ctx, kit.CallerFrom(ctx).Scope, r.Id, patch)
	if err != nil {
		return nil, err
	}
	return api.UpdateProduct200JSONResponse{Body: present.Product(p)}, nil
}

func (m *merchantAPI) ArchiveProduct(ctx context.Context, r api.ArchiveProductRequestObject) (api.ArchiveProductResponseObject, error) {
	p, err := m.catalog.ArchiveProduct(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	return api.ArchiveProduct200JSONResponse{Body: present.Product(p)}, nil
}

func (m *merchantAPI) SetDefaultPrice(ctx context.Context, r api.SetDefaultPriceRequestObject) (api.SetDefaultPriceResponseObject, error) {
	p, err := m.catalog.SetDefaultPrice(ctx, kit.CallerFrom(ctx).Scope, r.Id, r.Body.Price)
	if err != nil {
		return nil, err
	}
	return api.SetDefaultPrice200JSONResponse{Body: present.Product(p)}, nil
}

func (m *merchantAPI) CreatePrice(ctx context.Context, r api.CreatePriceRequestObject) (api.CreatePriceResponseObject, error) {
	b := r.Body
	in := catalog.PriceInput{Currency: b.Currency, UnitAmount: b.UnitAmount, Nickname: b.Nickname, LookupKey: b.LookupKey,
		TaxBehavior: taxBehaviorIn(b.TaxBehavior), Recurring: recurringIn(b.Recurring), Metadata: present.MetadataIn(b.Metadata)}
	p, err := m.catalog.CreatePrice(ctx, kit.CallerFrom(ctx).Scope, r.Id, in, b.SetAsDefault != nil && *b.SetAsDefault)
	if err != nil {
		return nil, err
	}
	return api.CreatePrice200JSONResponse{Body: present.Price(p)}, nil
}

func (m *merchantAPI) ListPrices(ctx context.Context, r api.ListPricesRequestObject) (api.ListPricesResponseObject, error) {
	page, err := m.catalog.ListPrices(ctx, kit.CallerFrom(ctx).Scope, r.Id, present.ListQuery(r.Params.Limit, r.Params.StartingAfter, r.Params.EndingBefore), r.Params.Active)
	if err != nil {
		return nil, err
	}
	out := api.PriceList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/v1/products/" + r.Id + "/prices", Data: make([]api.Price, 0, len(page.Items))}
	for _, p := range page.Items {
		out.Data = append(out.Data, present.Price(p))
	}
	return api.ListPrices200JSONResponse{Body: out}, nil
}

func (m *merchantAPI) RetrievePrice(ctx context.Context, r api.RetrievePriceRequestObject) (api.RetrievePriceResponseObject, error) {
	p, err := m.catalog.GetPrice(ctx, kit.CallerFrom(ctx).Scope, r.Id, r.PriceId)
	if err != nil {
		return nil, err
	}
	return api.RetrievePrice200JSONResponse{Body: present.Price(p)}, nil
}

func (m *merchantAPI) UpdatePrice(ctx context.Context, r api.UpdatePriceRequestObject) (api.UpdatePriceResponseObject, error) {
	b := r.Body
	patch := catalog.PricePatch{Active: b.Active, Nickname: b.Nickname, LookupKey: b.LookupKey, Metadata: present.MetadataIn(b.Metadata)}
	if b.TaxBehavior != nil {
		tb := string(*b.TaxBehavior)
		patch.TaxBehavior = &tb
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"unit_amount", b.UnitAmount}, {"currency", b.Currency}, {"recurring", b.Recurring}, {"type", b.Type}} {
		if f.v != nil {
			patch.Immutable = append(patch.Immutable, f.name)
		}
	}
	p, err := m.catalog.UpdatePrice(ctx, kit.CallerFrom(ctx).Scope, r.Id, r.PriceId, patch)
	if err != nil {
		return nil, err
	}
	return api.UpdatePrice200JSONResponse{Body: present.Price(p)}, nil
}

func dimensionsIn(d *api.PackageDimensions) *catalog.Dimensions {
	if d == nil {
		return nil
	}
	return &catalog.Dimensions{Length: d.Length, Width: d.Width, Height: d.Height, Weight: d.Weight}
}

func taxBehaviorIn(t *api.TaxBehavior) string {
	if t == nil {
		return ""
	}
	return string(*t)
}

func recurringIn(r *api.RecurringParams) *catalog.Recurring {
	if r == nil {
		return nil
	}
	out := &catalog.Recurring{Interval: string(r.Interval), TrialPeriodDays: r.TrialPeriodDays}
	if r.IntervalCount != nil {
		out.IntervalCount = *r.IntervalCount
	}
	if r.UsageType != nil {
		out.UsageType = string(*r.UsageType)
	}
	return out
}
