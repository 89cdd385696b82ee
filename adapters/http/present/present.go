package present

import (
	"encoding/json"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/events"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Presenters translate module entities into the generated wire types. Sessions, payments and
// disputes are rendered by the merchant wire model (adapters/wire), which also renders event
// payloads, so an event's data.object is exactly what the API returns for the same object;
// this package renders the rest (products, prices, stored events).

// Product renders a product.
func Product(p *catalog.Product) api.Product {
	prices := make([]api.Price, 0, len(p.Prices()))
	for _, pr := range p.Prices() {
		prices = append(prices, Price(pr))
	}
	out := api.Product{
		Id:                  p.ID(),
		Object:              api.ProductObjectProduct,
		Name:                p.Name(),
		Description:         optional(p.Description()),
		Images:              nonNil(p.Images()),
		TaxCode:             optional(p.TaxCode()),
		UnitLabel:           optional(p.UnitLabel()),
		StatementDescriptor: optional(p.StatementDescriptor()),
		Url:                 optional(p.URL()),
		Shippable:           p.Shippable(),
		Metadata:            metadataOut(p.Metadata()),
		Tags:                nonNil(p.Tags()),
		DefaultPrice:        optional(p.DefaultPrice()),
		Active:              p.Active(),
		Prices:              prices,
		Created:             p.Created().Unix(),
		Updated:             p.Updated().Unix(),
	}
	if d := p.PackageDimensions(); d != nil {
		out.PackageDimensions = &api.PackageDimensions{Length: float32(d.Length), Width: float32(d.Width),
			Height: float32(d.Height), Weight: float32(d.Weight)}
	}
	return out
}

// Price renders a price.
func Price(p *catalog.Price) api.Price {
	out := api.Price{
		Id:          p.ID(),
		Object:      api.PriceObjectPrice,
		Product:     p.ProductID(),
		Type:        api.PriceType(p.Type()),
		UnitAmount:  p.UnitAmount(),
		Currency:    string(p.Currency()),
		Nickname:    optional(p.Nickname()),
		Active:      p.Active(),
		TaxBehavior: api.TaxBehavior(p.TaxBehavior()),
		LookupKey:   optional(p.LookupKey()),
		Metadata:    metadataOut(p.Metadata()),
		Created:     p.Created().Unix(),
	}
	if r := p.Recurring(); r != nil {
		out.Recurring = &api.Recurring{Interval: api.RecurringInterval(r.Interval), IntervalCount: r.IntervalCount,
			TrialPeriodDays: r.TrialPeriodDays, UsageType: api.UsageType(r.UsageType)}
	}
	return out
}

// Event renders an event with its stored data.object.
func Event(e *events.Event) (api.Event, error) {
	var obj map[string]any
	if err := json.Unmarshal(e.Data, &obj); err != nil {
		return api.Event{}, err
	}
	return api.Event{
		Id: e.ID, Object: api.EventObjectEvent, Type: e.Type, Environment: api.Environment(e.Scope.Env),
		ApiVersion: core.APIVersion, Created: e.Created.Unix(), Data: api.EventData{Object: obj},
	}, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func metadataOut(m map[string]string) api.Metadata {
	if m == nil {
		return api.Metadata{}
	}
	return api.Metadata(m)
}

// MetadataIn is the metadata of a request (nil when absent).
func MetadataIn(m *api.Metadata) map[string]string {
	if m == nil {
		return nil
	}
	return map[string]string(*m)
}

// ListQuery is the cursor query of a merchant API list.
func ListQuery(limit *api.Limit, after *api.StartingAfter, before *api.EndingBefore) core.ListQuery {
	var q core.ListQuery
	if limit != nil {
		q.Limit = int(*limit)
	}
	if after != nil {
		q.StartingAfter = string(*after)
	}
	if before != nil {
		q.EndingBefore = string(*before)
	}
	return q
}

// UnixPtr is an optional timestamp in Unix seconds.
func UnixPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	u := t.Unix()
	return &u
}
