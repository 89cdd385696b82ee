package checkout

import (
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// validateConfirm checks what the buyer typed before anything is charged: the rules of
// payments.ValidateMethod, shared by every kind of payable. currency is the session's.
func validateConfirm(in ConfirmInput, currency core.Currency, now time.Time) error {
	return payments.ValidateMethod(in.Method, in.Card, in.SEPA, currency, "checkout sessions", now)
}
