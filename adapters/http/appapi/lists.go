package appapi

import (
	"context"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
)

// Disputes and subscriptions: one shape in both environments (a sandbox token reads the test
// environment's).

func (s *server) ListDisputes(ctx context.Context, r appapi.ListDisputesRequestObject) (appapi.ListDisputesResponseObject, error) {
	limit, offset, err := page(r.Params.Limit, r.Params.Offset)
	if err != nil {
		return nil, err
	}
	scope := callerOf(ctx).Scope
	items, more, err := s.d.Reader.Disputes(ctx, scope, limit, offset)
	if err != nil {
		return nil, err
	}
	// past_due is read at the scope's now: the sandbox test clock's for a test token.
	now, err := s.d.Clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := appapi.DisputeList{Object: appapi.DisputeListObjectList, HasMore: more, Data: make([]appapi.Dispute, 0, len(items))}
	for _, d := range items {
		cur := strings.ToLower(string(d.Currency()))
		out.Data = append(out.Data, appapi.Dispute{Id: d.ID(), Object: appapi.DisputeObjectDispute, Payment: d.PaymentID(),
			Amount: appapi.Money{Amount: d.Amount(), Currency: cur}, Reason: d.Reason(), Status: appapi.DisputeStatus(d.Status()),
			EvidenceDueBy: d.EvidenceDueBy().UTC(), PastDue: d.PastDue(now), EvidenceSubmittedAt: utc(d.SubmittedAt()),
			ClosedAt: utc(d.ClosedAt()), Fee: appapi.Money{Amount: d.Fee().Amount, Currency: cur}, Created: d.Created().UTC()})
	}
	return appapi.ListDisputes200JSONResponse{Body: out}, nil
}

func (s *server) ListSubscriptions(ctx context.Context, r appapi.ListSubscriptionsRequestObject) (appapi.ListSubscriptionsResponseObject, error) {
	limit, offset, err := page(r.Params.Limit, r.Params.Offset)
	if err != nil {
		return nil, err
	}
	items, more, err := s.d.Reader.Subscriptions(ctx, callerOf(ctx).Scope, limit, offset)
	if err != nil {
		return nil, err
	}
	out := appapi.SubscriptionList{Object: appapi.SubscriptionListObjectList, HasMore: more, Data: make([]appapi.Subscription, 0, len(items))}
	for _, sub := range items {
		out.Data = append(out.Data, presentSubscription(sub))
	}
	return appapi.ListSubscriptions200JSONResponse{Body: out}, nil
}

// presentSubscription is the app form of a subscription, the app events' AppSubscription.
func presentSubscription(sub *billing.Subscription) appapi.Subscription {
	s := sub.Snapshot()
	md := s.Metadata
	if md == nil {
		md = map[string]string{}
	}
	return appapi.Subscription{Id: s.ID, Object: appapi.SubscriptionObjectSubscription, Status: appapi.SubscriptionStatus(s.Status),
		Customer: s.Customer, PriceId: s.PriceID, Quantity: int(s.Quantity),
		Amount:             appapi.Money{Amount: sub.Amount(), Currency: strings.ToLower(string(s.Currency))},
		CurrentPeriodStart: s.PeriodStart.UTC(), CurrentPeriodEnd: s.PeriodEnd.UTC(), TrialEnd: utc(s.TrialEnd),
		CancelAtPeriodEnd: s.CancelAtPeriodEnd, CanceledAt: utc(s.CanceledAt), EndedAt: utc(s.EndedAt),
		Metadata: md, Created: s.Created.UTC()}
}

// utc is t in UTC, nil for nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}
