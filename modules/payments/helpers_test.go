package payments

import (
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var (
	dueT0    = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	dueScope = core.Scope{MerchantID: "mer_due", Env: core.EnvTest}
)

// dueRecord is a payment of a session of dueScope with processor reference ref.
func dueRecord(t *testing.T, ref string, status Status, method PaymentMethod) *Record {
	t.Helper()
	sid := core.NewID(core.PrefixSession)
	var card *Card
	if method == MethodCard {
		card = &Card{Brand: "visa", Last4: "0259", Country: "US", Funding: "credit"}
	}
	p, err := NewPayment(NewPaymentParams{Scope: dueScope, PayableKind: "checkout_session", SessionID: &sid, Amount: 1000,
		Currency: "EUR", Status: status, Method: method, Card: card, Fee: Fee{Currency: "EUR"}, Created: dueT0})
	if err != nil {
		t.Fatal(err)
	}
	return &Record{Payment: p, ProcessorRef: ref, PayableKey: sid}
}
