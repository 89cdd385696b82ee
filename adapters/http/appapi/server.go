package appapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/catalog"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/openapi/gen/appapi"
)

// The App API's query limits (interface 8).
const (
	defaultLimit = 25
	maxLimit     = 100
	defaultDays  = 30
	maxDays      = 365
)

// server implements the generated strict server. The front has authenticated the caller and
// checked the endpoint's scope before any method runs.
type server struct {
	d    Deps
	spec []byte
}

var _ appapi.StrictServerInterface = (*server)(nil)

type rawJSON []byte

func (b rawJSON) VisitGetAppSpecResponse(w http.ResponseWriter) error { return kit.WriteRaw(w, b) }

func (s *server) GetAppSpec(context.Context, appapi.GetAppSpecRequestObject) (appapi.GetAppSpecResponseObject, error) {
	return rawJSON(s.spec), nil
}

// page checks limit and offset: limit 1 to 100 (default 25), offset 0 or more (default 0).
func page(limit *int, offset *int64) (int, int64, error) {
	l, o := defaultLimit, int64(0)
	if limit != nil {
		l = *limit
	}
	if offset != nil {
		o = *offset
	}
	if l < 1 || l > maxLimit {
		return 0, 0, invalid("limit must be an integer from 1 to %d.", maxLimit)
	}
	if o < 0 {
		return 0, 0, invalid("offset must be an integer of 0 or more.")
	}
	return l, o, nil
}

func (s *server) GetMerchant(ctx context.Context, _ appapi.GetMerchantRequestObject) (appapi.GetMerchantResponseObject, error) {
	m, err := s.d.Identity.GetMerchant(ctx, callerOf(ctx).Scope.MerchantID)
	if err != nil {
		return nil, err
	}
	status := appapi.MerchantStatusOnboarding
	if m.Onboarded() {
		status = appapi.MerchantStatusActive
	}
	return appapi.GetMerchant200JSONResponse{Body: appapi.Merchant{
		Id: m.ID(), Object: appapi.MerchantObjectMerchant, Company: m.Name(), Country: m.Country(),
		Email: m.Email(), Status: status, Created: m.Created().UTC(),
	}}, nil
}

func (s *server) ListPayments(ctx context.Context, r appapi.ListPaymentsRequestObject) (appapi.ListPaymentsResponseObject, error) {
	limit, offset, err := page(r.Params.Limit, r.Params.Offset)
	if err != nil {
		return nil, err
	}
	var status payments.Status
	if r.Params.Status != nil {
		status = payments.Status(*r.Params.Status)
		if !status.Valid() {
			return nil, invalid("status must be one of processing, succeeded, failed, partially_refunded, refunded, disputed.")
		}
	}
	items, more, err := s.d.Reader.Payments(ctx, callerOf(ctx).Scope, limit, offset, status)
	if err != nil {
		return nil, err
	}
	out := appapi.PaymentList{Object: appapi.PaymentListObjectList, HasMore: more, Data: make([]appapi.Payment, 0, len(items))}
	for _, p := range items {
		out.Data = append(out.Data, presentPayment(p))
	}
	return appapi.ListPayments200JSONResponse{Body: out}, nil
}

func (s *server) GetPayment(ctx context.Context, r appapi.GetPaymentRequestObject) (appapi.GetPaymentResponseObject, error) {
	p, err := s.d.Reader.Payment(ctx, callerOf(ctx).Scope, r.Id)
	if errors.Is(err, payments.ErrNotFound) {
		return nil, core.NotFound("payment", "id", r.Id)
	}
	if err != nil {
		return nil, err
	}
	return appapi.GetPayment200JSONResponse{Body: presentPayment(p)}, nil
}

func (s *server) ListProducts(ctx context.Context, r appapi.ListProductsRequestObject) (appapi.ListProductsResponseObject, error) {
	limit, offset, err := page(r.Params.Limit, r.Params.Offset)
	if err != nil {
		return nil, err
	}
	items, more, err := s.d.Reader.Products(ctx, callerOf(ctx).Scope, limit, offset)
	if err != nil {
		return nil, err
	}
	out := appapi.ProductList{Object: appapi.ProductListObjectList, HasMore: more, Data: make([]appapi.Product, 0, len(items))}
	for _, p := range items {
		out.Data = append(out.Data, presentProduct(p))
	}
	return appapi.ListProducts200JSONResponse{Body: out}, nil
}

func (s *server) GetAnalyticsSummary(ctx context.Context, r appapi.GetAnalyticsSummaryRequestObject) (appapi.GetAnalyticsSummaryResponseObject, error) {
	days := defaultDays
	if r.Params.Days != nil {
		days = *r.Params.Days
	}
	if days < 1 || days > maxDays {
		return nil, invalid("days must be an integer from 1 to %d.", maxDays)
	}
	scope := callerOf(ctx).Scope
	end, err := s.d.Clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	// The window ends after the current second, so that a payment made this second counts.
	end = end.UTC().Truncate(time.Second).Add(time.Second)
	start := end.AddDate(0, 0, -days)
	vols, err := s.d.Reader.Volumes(ctx, scope, start, end)
	if err != nil {
		return nil, err
	}
	out := appapi.AnalyticsSummary{Object: appapi.AnalyticsSummaryObjectAnalyticsSummary, Days: days, Start: start, End: end,
		Currencies: make([]appapi.CurrencyVolume, 0, len(vols))}
	for _, v := range vols {
		cur := strings.ToLower(string(v.Currency))
		m := func(a int64) appapi.Money { return appapi.Money{Amount: a, Currency: cur} }
		out.Currencies = append(out.Currencies, appapi.CurrencyVolume{
			Currency: cur, GrossVolume: m(v.Gross), Refunded: m(v.Refunded), Fees: m(v.Fees),
			NetVolume: m(v.Net()), PaymentCount: v.Count,
		})
	}
	return appapi.GetAnalyticsSummary200JSONResponse{Body: out}, nil
}

func presentPayment(p *payments.Payment) appapi.Payment {
	cur := strings.ToLower(string(p.Currency()))
	out := appapi.Payment{
		Id: p.ID(), Object: appapi.PaymentObjectPayment, Status: appapi.PaymentStatus(p.Status()),
		Amount:         appapi.Money{Amount: p.Amount(), Currency: cur},
		AmountRefunded: appapi.Money{Amount: p.AmountRefunded(), Currency: cur},
		Fee:            appapi.Money{Amount: p.Fee().ServiceFeeChargeCurrency, Currency: cur},
		PaymentMethod:  string(p.PaymentMethod()),
		Session:        p.SessionID(), Invoice: p.InvoiceID(), Reference: p.Reference(),
		Created: p.Created().UTC(),
	}
	out.Customer.Name, out.Customer.Email = p.Customer().Name, p.Customer().Email
	if c := p.Card(); c != nil {
		out.Card = &struct {
			Brand   string `json:"brand"`
			Country string `json:"country"`
			Funding string `json:"funding"`
			Last4   string `json:"last4"`
		}{Brand: c.Brand, Country: c.Country, Funding: c.Funding, Last4: c.Last4}
	}
	return out
}

func presentProduct(p *catalog.Product) appapi.Product {
	out := appapi.Product{
		Id: p.ID(), Object: appapi.ProductObjectProduct, Name: p.Name(), Active: p.Active(),
		Images: p.Images(), Tags: p.Tags(), Metadata: p.Metadata(), Created: p.Created().UTC(),
	}
	if d := p.Description(); d != "" {
		out.Description = &d
	}
	if out.Images == nil {
		out.Images = []string{}
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	return out
}
