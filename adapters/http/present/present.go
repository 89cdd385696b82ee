package present

import (
	"encoding/json"
	"time"

	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/events"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Presenters translate module entities into the generated wire types. Sessions, payments and
// disputes are rendered by the merchant wire model (adapters/wire), which also renders event
// payloads, so an event's data.object is exactly what the API returns for the same object;
// this package renders the rest (products, prices, stored events).

// Product renders a product.
func Product(p *catalog.Product) wire.Product {
	prices := make([]wire.Price, 0, len(p.Prices()))
	for _, pr := range p.Prices() {
		prices = append(prices, Price(pr))
	}
	out := wire.Product{
		Id:                  p.ID(),
		Object:              wire.ProductObjectProduct,
		Name:                p.Name(),
		Description:         optional(p.Description()),
		Images:              nonNil(p.Images()),
		TaxCode:             optional(p.TaxCode()),
		UnitLabel:           optional(p.UnitLabel()),
		StatementDescriptor: optional(p.StatementDescriptor()),
		Url:                 optional(p.URL()),
		Shippable:           p.Shippable(),
		Metadata:            render.Metadata(p.Metadata()),
		Tags:                nonNil(p.Tags()),
		DefaultPrice:        optional(p.DefaultPrice()),
		Active:              p.Active(),
		Prices:              prices,
		Created:             p.Created().Unix(),
		Updated:             p.Updated().Unix(),
	}
	if d := p.PackageDimensions(); d != nil {
		out.PackageDimensions = &wire.PackageDimensions{Length: d.Length, Width: d.Width,
			Height: d.Height, Weight: d.Weight}
	}
	return out
}

// Price renders a price.
func Price(p *catalog.Price) wire.Price {
	out := wire.Price{
		Id:          p.ID(),
		Object:      wire.PriceObjectPrice,
		Product:     p.ProductID(),
		Type:        wire.PriceType(p.Type()),
		UnitAmount:  p.UnitAmount(),
		Currency:    string(p.Currency()),
		Nickname:    optional(p.Nickname()),
		Active:      p.Active(),
		TaxBehavior: wire.TaxBehavior(p.TaxBehavior()),
		LookupKey:   optional(p.LookupKey()),
		Metadata:    render.Metadata(p.Metadata()),
		Created:     p.Created().Unix(),
	}
	if r := p.Recurring(); r != nil {
		out.Recurring = &wire.Recurring{Interval: wire.RecurringInterval(r.Interval), IntervalCount: r.IntervalCount,
			TrialPeriodDays: r.TrialPeriodDays, UsageType: wire.UsageType(r.UsageType)}
	}
	return out
}

// Event renders a kept event as the merchant channel carries it (GET /v1/events): the
// envelope, with data.object rendered by wire.RenderEvent.
func Event(e *events.Event) (wire.Event, error) {
	raw, err := render.RenderEvent(*e, core.ChannelMerchant)
	if err != nil {
		return wire.Event{}, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return wire.Event{}, err
	}
	return wire.Event{
		Id: e.ID, Object: wire.EventObjectEvent, Type: string(e.Type), Environment: wire.Environment(e.Scope.Env),
		ApiVersion: core.APIVersion, Created: e.Created.Unix(), Data: wire.EventData{Object: obj},
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

// MetadataIn is the metadata of a request (nil when absent).
func MetadataIn(m *wire.Metadata) map[string]string {
	if m == nil {
		return nil
	}
	return map[string]string(*m)
}

// ListQuery is the cursor query of a merchant API list.
func ListQuery(limit *int, after, before *string) core.ListQuery {
	var q core.ListQuery
	if limit != nil {
		q.Limit = *limit
	}
	if after != nil {
		q.StartingAfter = *after
	}
	if before != nil {
		q.EndingBefore = *before
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
