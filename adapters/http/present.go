package httpapi

import (
	"encoding/json"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/payments"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// Presenters translate module entities into the generated wire types: the one place that
// knows both. PresentSession also renders event payloads (checkout.Presenter), so an event's
// data.object is exactly what the API returns for the same session.

// PresentSession renders a checkout session (2.1, D6).
func PresentSession(s *checkout.Session) any { return presentSession(s) }

func presentSession(s *checkout.Session) api.CheckoutSession {
	items := make([]api.LineItem, 0, len(s.LineItems()))
	for _, li := range s.LineItems() {
		items = append(items, api.LineItem{Name: li.Name, Quantity: li.Quantity, Amount: li.Amount,
			ImageUrl: li.ImageURL, PriceId: li.PriceID, ProductId: li.ProductID})
	}
	out := api.CheckoutSession{
		Id:            s.ID(),
		Object:        api.CheckoutSessionObjectCheckoutSession,
		Mode:          api.Environment(s.Environment()),
		CheckoutMode:  api.CheckoutMode(s.Mode()),
		Status:        api.CheckoutSessionStatus(s.Status()),
		Amount:        s.Amount(),
		Currency:      string(s.Currency()),
		ClientSecret:  s.ClientSecret(),
		CheckoutUrl:   s.CheckoutURL(),
		EmbedUrl:      s.EmbedURL(),
		ExpiresAt:     s.ExpiresAt().Unix(),
		Created:       s.Created().Unix(),
		CustomerName:  s.CustomerName(),
		CustomerEmail: s.CustomerEmail(),
		Reference:     s.Reference(),
		Description:   s.Description(),
		LineItems:     items,
		SuccessUrl:    s.SuccessURL(),
		CancelUrl:     s.CancelURL(),
		Metadata:      metadataOut(s.Metadata()),
	}
	if r := s.CancellationReason(); r != nil {
		cr := api.CheckoutSessionCancellationReason(*r)
		out.CancellationReason = &cr
	}
	if p := s.Payment(); p != nil {
		pp := presentPayment(p)
		out.Payment = &pp
	}
	return out
}

// PresentPayment renders a payment (2.2); it also renders payment event payloads
// (checkout.PaymentPresenter).
func PresentPayment(p *payments.Payment) any { return presentPayment(p) }

func presentPayment(p *payments.Payment) api.Payment {
	fee := p.Fee()
	c := p.Customer()
	out := api.Payment{
		Id:             p.ID(),
		Object:         api.PaymentObjectPayment,
		SessionId:      p.SessionID(),
		InvoiceId:      p.InvoiceID(),
		Amount:         p.Amount(),
		AmountRefunded: p.AmountRefunded(),
		Currency:       string(p.Currency()),
		Status:         api.PaymentStatus(p.Status()),
		PaymentMethod:  api.PaymentPaymentMethod(p.PaymentMethod()),
		Fee: api.PaymentFee{
			ServiceFeeEur:            fee.ServiceFeeEUR,
			ServiceFeeChargeCurrency: fee.ServiceFeeChargeCurrency,
			PspFeeEur:                fee.PSPFeeEUR,
			Currency:                 string(fee.Currency),
		},
		Customer:  api.PaymentCustomer{Name: c.Name, Email: c.Email},
		Reference: p.Reference(),
		Metadata:  metadataOut(p.Metadata()),
		Created:   p.Created().Unix(),
	}
	if card := p.Card(); card != nil {
		out.Card = &api.PaymentCard{Brand: card.Brand, Last4: card.Last4, Country: card.Country, Funding: card.Funding}
	}
	out.FailureCode, out.FailureMessage = p.FailureCode(), p.FailureMessage()
	return out
}

func presentProduct(p *catalog.Product) api.Product {
	prices := make([]api.Price, 0, len(p.Prices()))
	for _, pr := range p.Prices() {
		prices = append(prices, presentPrice(pr))
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
		out.PackageDimensions = &api.PackageDimensions{Length: d.Length, Width: d.Width,
			Height: d.Height, Weight: d.Weight}
	}
	return out
}

func presentPrice(p *catalog.Price) api.Price {
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

func presentEvent(e *events.Event) (api.Event, error) {
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

func metadataIn(m *api.Metadata) map[string]string {
	if m == nil {
		return nil
	}
	return map[string]string(*m)
}

func listQuery(limit *api.Limit, after *api.StartingAfter, before *api.EndingBefore) core.ListQuery {
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
