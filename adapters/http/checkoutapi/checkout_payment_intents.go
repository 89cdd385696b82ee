package checkoutapi

import (
	"context"
	"strings"

	"github.com/kassa-pay/kassa/modules/billing"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
)

// A subscription's first payment, seen and confirmed by its customer's browser with the
// client secret (pi_…_secret_…).

// paymentIntentSecret is the client secret when it names id: the client secret names: the part before _secret_ must be the
// path's id, or the secret does not open it.
func paymentIntentSecret(ctx context.Context, id string) string {
	s := clientSecretOf(ctx)
	if !strings.HasPrefix(s, id+"_secret_") {
		return ""
	}
	return s
}

func presentPaymentIntent(fp *billing.FirstPayment) capi.BuyerPaymentIntent {
	s := fp.Subscription.Snapshot()
	out := capi.BuyerPaymentIntent{Id: s.PaymentIntent, Object: capi.BuyerPaymentIntentObjectPaymentIntent, Amount: fp.Amount,
		Currency: string(s.Currency), RecurringAmount: fp.Subscription.Amount(), SubscriptionStatus: string(s.Status),
		Mode: capi.BuyerPaymentIntentMode(s.Scope.Env)}
	switch s.Status {
	case billing.StatusIncomplete:
		out.Status = capi.BuyerPaymentIntentStatusRequiresPaymentMethod
		if fp.Processing {
			out.Status = capi.BuyerPaymentIntentStatusProcessing
		}
		if a := fp.Action; a != nil && !fp.Processing {
			out.Status = capi.BuyerPaymentIntentStatusRequiresAction
			out.NextAction = &capi.NextAction{Type: capi.NextActionType(a.Kind)}
			if a.RedirectURL != "" {
				u := a.RedirectURL
				out.NextAction.RedirectUrl = &u
			}
		}
	case billing.StatusIncompleteExpired:
		out.Status = capi.BuyerPaymentIntentStatusCanceled
	case billing.StatusCanceled:
		out.Status = capi.BuyerPaymentIntentStatusCanceled
		if s.DefaultMethod != nil {
			out.Status = capi.BuyerPaymentIntentStatusSucceeded
		}
	default:
		out.Status = capi.BuyerPaymentIntentStatusSucceeded
	}
	if s.TrialEnd != nil {
		u := s.TrialEnd.Unix()
		out.TrialEnd = &u
	}
	if d := s.DefaultMethod; d != nil {
		out.PaymentMethod = &struct {
			Brand string                                   `json:"brand"`
			Last4 string                                   `json:"last4"`
			Type  capi.BuyerPaymentIntentPaymentMethodType `json:"type"`
		}{Brand: d.Brand, Last4: d.Last4, Type: capi.BuyerPaymentIntentPaymentMethodType(d.Type)}
	}
	return out
}

func (a *checkoutAPI) GetBuyerPaymentIntent(ctx context.Context, r capi.GetBuyerPaymentIntentRequestObject) (capi.GetBuyerPaymentIntentResponseObject, error) {
	if a.billing == nil {
		return nil, billing.ErrPaymentIntentState
	}
	fp, err := a.billing.FirstPaymentView(ctx, r.Id, paymentIntentSecret(ctx, r.Id))
	if err != nil {
		return nil, err
	}
	return capi.GetBuyerPaymentIntent200JSONResponse{Body: presentPaymentIntent(fp)}, nil
}

func (a *checkoutAPI) ConfirmBuyerPaymentIntent(ctx context.Context, r capi.ConfirmBuyerPaymentIntentRequestObject) (capi.ConfirmBuyerPaymentIntentResponseObject, error) {
	if a.billing == nil {
		return nil, billing.ErrPaymentIntentState
	}
	in, err := confirmInput(r.Body)
	if err != nil {
		return nil, err
	}
	fp, err := a.billing.ConfirmFirstPayment(ctx, r.Id, paymentIntentSecret(ctx, r.Id),
		billing.MethodInput{Method: in.Method, Card: in.Card, SEPA: in.SEPA})
	if err != nil {
		return nil, err
	}
	return capi.ConfirmBuyerPaymentIntent200JSONResponse{Body: presentPaymentIntent(fp)}, nil
}

func (a *checkoutAPI) ResolveBuyerPaymentIntentAction(ctx context.Context, r capi.ResolveBuyerPaymentIntentActionRequestObject) (capi.ResolveBuyerPaymentIntentActionResponseObject, error) {
	if a.billing == nil {
		return nil, billing.ErrPaymentIntentState
	}
	fp, err := a.billing.ResolveFirstPayment(ctx, r.Id, paymentIntentSecret(ctx, r.Id), r.Body.Approve)
	if err != nil {
		return nil, err
	}
	return capi.ResolveBuyerPaymentIntentAction200JSONResponse{Body: presentPaymentIntent(fp)}, nil
}
