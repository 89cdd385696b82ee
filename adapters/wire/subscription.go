package wire

import (
	"time"

	"github.com/kassa-pay/kassa/modules/billing"
	api "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// Subscription renders a subscription (merchant.yaml components.schemas.Subscription): the
// merchant API's answer and the data.object of the customer.subscription.* events.
func Subscription(sub *billing.Subscription) api.Subscription {
	s := sub.Snapshot()
	out := api.Subscription{Id: s.ID, Object: api.SubscriptionObjectSubscription, Status: api.SubscriptionStatus(s.Status),
		Customer: s.Customer, PriceId: s.PriceID, Quantity: s.Quantity, Currency: string(s.Currency), Amount: sub.Amount(),
		CurrentPeriodStart: s.PeriodStart.Unix(), CurrentPeriodEnd: s.PeriodEnd.Unix(), LatestInvoice: s.LatestInvoice,
		ClientSecret: s.ClientSecret, TrialEnd: unixp(s.TrialEnd), CancelAtPeriodEnd: s.CancelAtPeriodEnd,
		CanceledAt: unixp(s.CanceledAt), EndedAt: unixp(s.EndedAt), Metadata: Metadata(s.Metadata), Created: s.Created.Unix()}
	if d := s.DefaultMethod; d != nil {
		out.DefaultPaymentMethod = &api.SubscriptionPaymentMethod{Type: api.SubscriptionPaymentMethodType(d.Type),
			Brand: d.Brand, Last4: d.Last4, ExpMonth: d.ExpMonth, ExpYear: d.ExpYear}
	}
	if p := sub.Paused(); p != nil {
		out.PauseCollection = &api.SubscriptionPauseCollection{ResumesAt: unixp(p.ResumesAt)}
	}
	if u := sub.Scheduled(); u != nil {
		out.PendingUpdate = &api.SubscriptionPendingUpdate{PriceId: u.PriceID, Quantity: u.Quantity,
			Amount: u.UnitAmount * u.Quantity, EffectiveAt: u.EffectiveAt.Unix()}
	}
	return out
}

func unixp(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	u := t.Unix()
	return &u
}
