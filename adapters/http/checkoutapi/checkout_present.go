package checkoutapi

import (
	"errors"
	"net/http"

	"github.com/kassa-pay/kassa/adapters/http/kit"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/modules/invoicing"
	capi "github.com/kassa-pay/kassa/openapi/gen/checkoutapi"
)

// presentBuyerSession renders what the buyer may see of a session: no client secret, no
// metadata, no reference, nothing of other sessions.
func presentBuyerSession(s *checkout.Session, merchantName string, pending *checkout.PendingAction) capi.BuyerSession {
	items := make([]capi.BuyerLineItem, 0, len(s.LineItems()))
	for _, li := range s.LineItems() {
		items = append(items, capi.BuyerLineItem{Name: li.Name, Quantity: li.Quantity, Amount: li.Amount, ImageUrl: li.ImageURL})
	}
	methods := []capi.BuyerSessionPaymentMethodTypes{capi.BuyerSessionPaymentMethodTypesCard}
	if s.Currency() == "EUR" {
		methods = append(methods, capi.BuyerSessionPaymentMethodTypesSepaDebit)
	}
	out := capi.BuyerSession{
		Id:                 s.ID(),
		Object:             capi.BuyerSessionObjectCheckoutSession,
		Mode:               capi.BuyerSessionMode(s.Environment()),
		Status:             capi.BuyerSessionStatus(s.Status()),
		Amount:             s.Amount(),
		Currency:           string(s.Currency()),
		Description:        s.Description(),
		LineItems:          items,
		CustomerName:       s.CustomerName(),
		CustomerEmail:      s.CustomerEmail(),
		MerchantName:       merchantName,
		SuccessUrl:         s.SuccessURL(),
		CancelUrl:          s.CancelURL(),
		ExpiresAt:          s.ExpiresAt().Unix(),
		PaymentMethodTypes: methods,
		NextAction:         nextAction(pending),
		CancellationReason: s.CancellationReason(),
	}
	if p := s.Payment(); p != nil {
		bp := capi.BuyerPayment{Id: p.ID(), Status: capi.BuyerPaymentStatus(p.Status()), Amount: p.Amount(),
			Currency: string(p.Currency()), PaymentMethod: capi.BuyerPaymentPaymentMethod(p.PaymentMethod())}
		if c := p.Card(); c != nil {
			bp.Card = &struct {
				Brand string `json:"brand"`
				Last4 string `json:"last4"`
			}{Brand: c.Brand, Last4: c.Last4}
		}
		out.Payment = &bp
	}
	return out
}

func nextAction(a *checkout.PendingAction) *capi.NextAction {
	if a == nil {
		return nil
	}
	out := &capi.NextAction{Type: capi.NextActionType(a.Kind)}
	if a.RedirectURL != "" {
		u := a.RedirectURL
		out.RedirectUrl = &u
	}
	return out
}

// writeCheckoutError writes the error envelope of the browser API: a decline as 402
// card_error / card_declined with its decline_code, anything else as the merchant API does
// (processor_unavailable is 503 by the status table).
func writeCheckoutError(w http.ResponseWriter, r *http.Request, err error) {
	var de *checkout.DeclineError
	if errors.As(err, &de) {
		kit.WriteEnvelope(w, kit.RequestID(r.Context()), de.CoreError(), de.DeclineCode)
		return
	}
	var ide *invoicing.DeclineError
	if errors.As(err, &ide) {
		kit.WriteEnvelope(w, kit.RequestID(r.Context()), ide.CoreError(), ide.DeclineCode)
		return
	}
	var bde *billing.DeclineError
	if errors.As(err, &bde) {
		kit.WriteEnvelope(w, kit.RequestID(r.Context()), bde.CoreError(), bde.DeclineCode)
		return
	}
	kit.WriteEnvelope(w, kit.RequestID(r.Context()), kit.AsDomainError(r, err), "")
}
