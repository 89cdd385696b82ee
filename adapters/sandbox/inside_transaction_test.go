package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// Every call of the processor refuses to run inside a unit of work: it answers
// ports.ErrInsideTransaction and charges, looks up, completes or settles nothing.
func TestTheProcessorRefusesToRunInsideATransaction(t *testing.T) {
	t.Parallel()
	p := New()
	ctx := ports.WithinTransaction(context.Background())
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	scope := core.Scope{MerchantID: "mer_x", Env: core.EnvTest}
	calls := map[string]func() error{
		"Charge": func() error {
			_, err := p.Charge(ctx, ports.ChargeRequest{Scope: scope, Method: ports.MethodCard, Amount: 1000, Currency: "EUR",
				Card: &ports.CardDetails{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "123"}}, now)
			return err
		},
		"Lookup": func() error { _, err := p.Lookup(ctx, scope, "cs_x:1", now); return err },
		"CompleteAction": func() error {
			_, err := p.CompleteAction(ctx, "ch_x", true, now)
			return err
		},
		"Settle": func() error { _, err := p.Settle(ctx, "ch_x", now); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ports.ErrInsideTransaction) {
			t.Errorf("%s inside a transaction: %v, want ErrInsideTransaction", name, err)
		}
	}
}
