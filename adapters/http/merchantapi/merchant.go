package merchantapi

import (
	"context"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/adapters/http/present"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/events"
	"github.com/kassa-pay/kassa/modules/testclock"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
	wire "github.com/kassa-pay/kassa/openapi/gen/schemas"
)

// merchantAPI implements the generated strict server of the merchant API. Each method
// translates wire types into a module call and back; business rules live in the modules.
type merchantAPI struct {
	catalog  *catalog.Service
	billing  *billing.Service
	checkout *checkout.Service
	events   *events.Service
	clock    *testclock.Service
	spec     []byte
}

var _ api.StrictServerInterface = (*merchantAPI)(nil)

// rawJSON is a response written as it is (the served OpenAPI document).
type rawJSON []byte

func (b rawJSON) VisitGetMerchantSpecResponse(w http.ResponseWriter) error { return kit.WriteRaw(w, b) }

func (m *merchantAPI) GetMerchantSpec(context.Context, api.GetMerchantSpecRequestObject) (api.GetMerchantSpecResponseObject, error) {
	return rawJSON(m.spec), nil
}

func (m *merchantAPI) ListEvents(ctx context.Context, r api.ListEventsRequestObject) (api.ListEventsResponseObject, error) {
	typ := ""
	if r.Params.Type != nil {
		typ = *r.Params.Type
	}
	page, err := m.events.List(ctx, kit.CallerFrom(ctx).Scope, present.ListQuery(r.Params.Limit, r.Params.StartingAfter, r.Params.EndingBefore), typ)
	if err != nil {
		return nil, err
	}
	out := api.EventList{Object: wire.ListObjectList, HasMore: page.HasMore, Url: "/v1/events", Data: make([]api.Event, 0, len(page.Items))}
	for _, e := range page.Items {
		ev, err := present.Event(e)
		if err != nil {
			return nil, err
		}
		out.Data = append(out.Data, ev)
	}
	return api.ListEvents200JSONResponse{Body: out}, nil
}

func (m *merchantAPI) RetrieveEvent(ctx context.Context, r api.RetrieveEventRequestObject) (api.RetrieveEventResponseObject, error) {
	e, err := m.events.Get(ctx, kit.CallerFrom(ctx).Scope, r.Id)
	if err != nil {
		return nil, err
	}
	ev, err := present.Event(e)
	if err != nil {
		return nil, err
	}
	return api.RetrieveEvent200JSONResponse{Body: ev}, nil
}

func (m *merchantAPI) GetTestClock(ctx context.Context, _ api.GetTestClockRequestObject) (api.GetTestClockResponseObject, error) {
	c, err := m.clock.Get(ctx, kit.CallerFrom(ctx).Scope)
	if err != nil {
		return nil, err
	}
	return api.GetTestClock200JSONResponse{Body: present.TestClock(c)}, nil
}

func (m *merchantAPI) AdvanceTestClock(ctx context.Context, r api.AdvanceTestClockRequestObject) (api.AdvanceTestClockResponseObject, error) {
	c, err := m.clock.Advance(ctx, kit.CallerFrom(ctx).Scope, r.Body.Seconds, r.Body.To)
	if err != nil {
		return nil, err
	}
	if c.Status == testclock.StatusAdvancing {
		// Not done within the wait: it goes on in the background, observable with GET.
		return api.AdvanceTestClock202JSONResponse{Body: present.TestClock(c)}, nil
	}
	return api.AdvanceTestClock200JSONResponse{Body: present.TestClock(c)}, nil
}
