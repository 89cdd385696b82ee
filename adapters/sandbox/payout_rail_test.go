package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// The sandbox rail refuses to send inside a unit of work, and a repeated request (same
// idempotency key) answers the same transfer.
func TestThePayoutRailSendsOutsideTransactionsOnce(t *testing.T) {
	t.Parallel()
	req := ports.PayoutRequest{Scope: core.Scope{MerchantID: "mer_x", Env: core.EnvTest}, IdempotencyKey: "po_1", Amount: 9795,
		Currency: "EUR", ArrivalDate: time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)}
	if _, err := (PayoutRail{}).Send(ports.WithinTransaction(context.Background()), req); !errors.Is(err, ports.ErrInsideTransaction) {
		t.Fatalf("inside a transaction: %v", err)
	}
	a, err := PayoutRail{}.Send(context.Background(), req)
	if err != nil || a.RailRef == "" {
		t.Fatalf("send: %+v %v", a, err)
	}
	b, err := PayoutRail{}.Send(context.Background(), req)
	if err != nil || b != a {
		t.Fatalf("repeated send: %+v, first %+v (%v)", b, a, err)
	}
	req.IdempotencyKey = "po_2"
	if c, _ := (PayoutRail{}).Send(context.Background(), req); c == a {
		t.Fatal("another payout answered the same transfer")
	}
}
