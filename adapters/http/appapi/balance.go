package appapi

import (
	"context"
	"strings"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/kassa-pay/kassa/modules/payouts"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
)

// The balance and the payouts (payouts:read, reviewed apps only): one shape in both
// environments (a sandbox token reads the test environment's ledger and payouts).

func (s *server) GetBalance(ctx context.Context, _ appapi.GetBalanceRequestObject) (appapi.GetBalanceResponseObject, error) {
	bs, err := s.d.Reader.Balances(ctx, callerOf(ctx).Scope)
	if err != nil {
		return nil, err
	}
	out := appapi.Balance{Object: appapi.BalanceObjectBalance, Available: make([]appapi.Money, 0, len(bs)),
		Pending: make([]appapi.Money, 0, len(bs))}
	for _, b := range bs {
		cur := strings.ToLower(string(b.Currency))
		out.Available = append(out.Available, appapi.Money{Amount: b.Available, Currency: cur})
		out.Pending = append(out.Pending, appapi.Money{Amount: b.Pending, Currency: cur})
	}
	return appapi.GetBalance200JSONResponse{Body: out}, nil
}

func (s *server) ListPayouts(ctx context.Context, r appapi.ListPayoutsRequestObject) (appapi.ListPayoutsResponseObject, error) {
	limit, offset, err := page(r.Params.Limit, r.Params.Offset)
	if err != nil {
		return nil, err
	}
	items, more, err := s.d.Reader.Payouts(ctx, callerOf(ctx).Scope, limit, offset)
	if err != nil {
		return nil, err
	}
	out := appapi.PayoutList{Object: appapi.PayoutListObjectList, HasMore: more, Data: make([]appapi.Payout, 0, len(items))}
	for _, p := range items {
		out.Data = append(out.Data, presentPayout(p))
	}
	return appapi.ListPayouts200JSONResponse{Body: out}, nil
}

func presentPayout(p *payouts.Payout) appapi.Payout {
	return appapi.Payout{Id: p.ID(), Object: appapi.PayoutObjectPayout,
		Amount: appapi.Money{Amount: p.Amount(), Currency: strings.ToLower(string(p.Currency()))},
		Status: appapi.PayoutStatus(p.Status()), ArrivalDate: openapi_types.Date{Time: p.ArrivalDate().UTC()},
		Created: p.Created().UTC()}
}
