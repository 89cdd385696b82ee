package checkoutapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/openapi"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
	"github.com/kassa-pay/kassa/ports"
)

// CheckoutAPIDeps is what the browser API of the checkout origin needs.
type CheckoutAPIDeps struct {
	Log      *slog.Logger
	Checkout *checkout.Service
	// Invoices serves the invoices of hosted links (nil: they are not found).
	Invoices *invoicing.Service
	// Billing serves subscriptions' first payments (nil: none opens).
	Billing *billing.Service
	Limits  *kit.RequestLimits // NewCheckoutLimits; nil: no request rate
	// BaseURL is the checkout origin's public base URL (KASSA_CHECKOUT_URL), named in the
	// served spec's servers.
	BaseURL string
}

// NewCheckoutAPIHandler assembles the browser API (openapi/checkout.yaml) served under /api/
// on the checkout listener: CORS and no-store on every answer, the contract gate (the client
// secret's form is checked there; whether it opens the session, in the use cases), then the
// generated strict server. It is wrapped in Outer (request id, access log without query,
// headers or bodies, so the secret is never logged).
func NewCheckoutAPIHandler(d CheckoutAPIDeps) (http.Handler, error) {
	spec, err := openapi.LoadCheckout()
	if err != nil {
		return nil, fmt.Errorf("checkout spec: %w", err)
	}
	served, err := openapi.Served(openapi.CheckoutJSON, d.BaseURL)
	if err != nil {
		return nil, err
	}
	strict := capi.NewStrictHandlerWithOptions(&checkoutAPI{checkout: d.Checkout, invoices: d.Invoices, billing: d.Billing, spec: served}, nil,
		capi.StrictHTTPServerOptions{
			RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, _ error) {
				writeCheckoutError(w, r, kit.ErrBodyInvalidJSON())
			},
			ResponseErrorHandlerFunc: writeCheckoutError,
		})
	mux := capi.HandlerWithOptions(strict, capi.StdHTTPServerOptions{BaseRouter: http.NewServeMux(), ErrorHandlerFunc: kit.ParamError})
	gate, err := kit.NewGate(kit.GateConfig{Spec: spec, Authenticate: clientSecretForm}, mux)
	if err != nil {
		return nil, err
	}
	root := http.NewServeMux()
	root.Handle("/api/v1/", gate)
	root.Handle("/api/v1", gate) // the envelope, not the mux's redirect to /api/v1/
	root.HandleFunc("/", kit.NotFound)
	return kit.Outer(d.Log.With("listener", "checkout"), browserHeaders(d.Limits.Wrap(root))), nil
}

// browserHeaders answers what every browser API response needs: CORS for any origin, without
// credentials (the client secret travels in Authorization, never in a cookie), preflights
// answered here, and no caching of anything that carries session data. The bearer secret is
// put in the request context for the handlers.
func browserHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "Request-Id")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			h.Set("Access-Control-Max-Age", "600")
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		ctx := context.WithValue(r.Context(), keyClientSecret, bearerToken(r.Header.Get("Authorization")))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// ctxKey is the type of this package's context keys.
type ctxKey int

const keyClientSecret ctxKey = 0

func bearerToken(h string) string {
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	return strings.TrimSpace(h[len(prefix):])
}

func clientSecretOf(ctx context.Context) string {
	s, _ := ctx.Value(keyClientSecret).(string)
	return s
}

// errClientSecretMissing is the 401 of a request without a client secret of the right form.
var errClientSecretMissing = core.NewError(core.TypeAuthentication, "client_secret_missing", "",
	"Send the session's client secret as Authorization: Bearer <CLIENT_SECRET>.")

// clientSecretForm is the gate's authenticator: it checks only the form of the secret
// (cs_…_secret_… of a session, pi_…_secret_… of a subscription's first payment); the use cases
// decide, in constant time, whether it opens the session or payment.
// There is no caller scope before that, so there is no per-merchant rate limit here.
func clientSecretForm(_ context.Context, authorization string) (core.Caller, error) {
	s := bearerToken(authorization)
	if !(strings.HasPrefix(s, core.PrefixSession) || strings.HasPrefix(s, "pi_")) || !strings.Contains(s, "_secret_") || len(s) > 255 {
		return core.Caller{}, errClientSecretMissing
	}
	return core.Caller{}, nil
}

// checkoutAPI implements the generated strict server of the browser API.
type checkoutAPI struct {
	checkout *checkout.Service
	invoices *invoicing.Service
	billing  *billing.Service
	spec     []byte
}

var _ capi.StrictServerInterface = (*checkoutAPI)(nil)

// rawJSON is a response written as it is (the served OpenAPI document).
type rawJSON []byte

func (b rawJSON) VisitGetCheckoutSpecResponse(w http.ResponseWriter) error { return kit.WriteRaw(w, b) }

func (a *checkoutAPI) GetCheckoutSpec(context.Context, capi.GetCheckoutSpecRequestObject) (capi.GetCheckoutSpecResponseObject, error) {
	return rawJSON(a.spec), nil
}

func (a *checkoutAPI) GetBuyerSession(ctx context.Context, r capi.GetBuyerSessionRequestObject) (capi.GetBuyerSessionResponseObject, error) {
	v, err := a.checkout.BuyerView(ctx, r.Id, clientSecretOf(ctx))
	if err != nil {
		return nil, err
	}
	out := presentBuyerSession(v.Session, v.MerchantName, v.Pending)
	if t := v.Recurring; t != nil {
		out.Recurring = &capi.BuyerRecurringTerms{Amount: v.Session.Amount(), Interval: capi.BuyerRecurringTermsInterval(t.Interval),
			IntervalCount: t.IntervalCount, TrialPeriodDays: t.TrialDays}
	}
	return capi.GetBuyerSession200JSONResponse{Body: out}, nil
}

func (a *checkoutAPI) ConfirmBuyerSession(ctx context.Context, r capi.ConfirmBuyerSessionRequestObject) (capi.ConfirmBuyerSessionResponseObject, error) {
	in, err := confirmInput(r.Body)
	if err != nil {
		return nil, err
	}
	res, err := a.checkout.Confirm(ctx, r.Id, clientSecretOf(ctx), in)
	if err != nil {
		return nil, err
	}
	return capi.ConfirmBuyerSession200JSONResponse{Body: confirmResult(res)}, nil
}

func (a *checkoutAPI) ResolveBuyerAction(ctx context.Context, r capi.ResolveBuyerActionRequestObject) (capi.ResolveBuyerActionResponseObject, error) {
	res, err := a.checkout.ResolveAction(ctx, r.Id, clientSecretOf(ctx), r.Body.Approve)
	if err != nil {
		return nil, err
	}
	return capi.ResolveBuyerAction200JSONResponse{Body: confirmResult(res)}, nil
}

func (a *checkoutAPI) CancelBuyerSession(ctx context.Context, r capi.CancelBuyerSessionRequestObject) (capi.CancelBuyerSessionResponseObject, error) {
	s, err := a.checkout.CancelByBuyer(ctx, r.Id, clientSecretOf(ctx))
	if err != nil {
		return nil, err
	}
	m, err := a.checkout.BuyerMerchant(ctx, s)
	if err != nil {
		return nil, err
	}
	return capi.CancelBuyerSession200JSONResponse{Body: capi.CancelResult{
		Object: capi.CancelResultObjectCheckoutCancellation, Session: presentBuyerSession(s, m.Name, nil), RedirectUrl: s.CancelURL(),
	}}, nil
}

// confirmResult renders the answer of Confirm and ResolveAction; the merchant's name is the one
// the use case read with the session (no second read).
func confirmResult(res *checkout.ConfirmResult) capi.ConfirmResult {
	out := capi.ConfirmResult{
		Object:     capi.ConfirmResultObjectCheckoutConfirmation,
		Status:     capi.ConfirmResultStatus(res.Status),
		Session:    presentBuyerSession(res.Session, res.Merchant.Name, res.Action),
		NextAction: nextAction(res.Action),
	}
	if res.Status != checkout.ConfirmRequiresAction {
		out.RedirectUrl = res.Session.SuccessURL()
	}
	return out
}

// confirmInput translates the wire body; fields the module cannot tell missing from zero
// (the expiry) are reported missing here.
func confirmInput(b *capi.ConfirmRequest) (checkout.ConfirmInput, error) {
	in := checkout.ConfirmInput{Method: ports.PaymentMethodKind(b.PaymentMethod)}
	if c := b.Card; c != nil {
		if in.Method == ports.MethodCard {
			switch {
			case c.Number == nil:
				return in, core.MissingField("card.number")
			case c.ExpMonth == nil:
				return in, core.MissingField("card.exp_month")
			case c.ExpYear == nil:
				return in, core.MissingField("card.exp_year")
			}
		}
		in.Card = &ports.CardDetails{Number: str(c.Number), ExpMonth: num(c.ExpMonth), ExpYear: num(c.ExpYear),
			CVC: str(c.Cvc), Name: str(c.Name)}
	}
	if d := b.SepaDebit; d != nil {
		in.SEPA = &ports.SEPADetails{IBAN: str(d.Iban), AccountHolder: str(d.AccountHolder)}
	}
	return in, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func num(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
