// Package wire is the merchant wire model: it renders domain entities and the domain events
// of modules (core.DomainEvent) into the forms the merchant API and merchant webhooks carry.
// It is the one place that knows those forms: the merchant API presents entities through it,
// and the outbox renders every event's payload through it (MerchantPayload), so an event's
// data.object is exactly what the API returns for the same object. A second channel (app
// events, D17) renders the same domain events in a function of its own beside it.
package wire

import (
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/payments"
	api "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Session renders a checkout session (interface 2.1, D6): the API's response and the
// data.object of the session events alike.
func Session(s *checkout.Session) api.CheckoutSession {
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
		Metadata:      Metadata(s.Metadata()),
	}
	out.Subscription = s.Subscription()
	if r := s.CancellationReason(); r != nil {
		cr := api.CheckoutSessionCancellationReason(*r)
		out.CancellationReason = &cr
	}
	if p := s.Payment(); p != nil {
		pp := Payment(p)
		out.Payment = &pp
	}
	if ps := s.PaymentStatus(); ps != "" {
		v := api.CheckoutSessionPaymentStatus(ps)
		out.PaymentStatus = &v
	}
	return out
}

// Payment renders a payment (interface 2.2): the API's response, the payment embedded in its
// session, and the data.object of the payment events alike.
func Payment(p *payments.Payment) api.Payment {
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
		Metadata:  Metadata(p.Metadata()),
		Created:   p.Created().Unix(),
	}
	if card := p.Card(); card != nil {
		out.Card = &api.PaymentCard{Brand: card.Brand, Last4: card.Last4, Country: card.Country, Funding: card.Funding}
	}
	out.FailureCode, out.FailureMessage = p.FailureCode(), p.FailureMessage()
	return out
}

// Metadata renders an entity's metadata: an empty object when it has none.
func Metadata(m map[string]string) api.Metadata {
	if m == nil {
		return api.Metadata{}
	}
	return api.Metadata(m)
}
