package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/kassa-pay/kassa/ports"
)

// PayoutRail is the sandbox payout rail: every payout is accepted and arrives on its arrival
// date. Its reference is derived from the idempotency key, so a repeated request answers the
// first one without any memory.
type PayoutRail struct{}

var _ ports.PayoutRail = PayoutRail{}

// Send accepts the payout.
func (PayoutRail) Send(ctx context.Context, req ports.PayoutRequest) (ports.PayoutResult, error) {
	if err := ports.OutsideTransaction(ctx); err != nil {
		return ports.PayoutResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.PayoutResult{}, err
	}
	if req.Amount <= 0 || req.IdempotencyKey == "" || req.Currency == "" {
		return ports.PayoutResult{}, fmt.Errorf("sandbox: payout: amount %d, key %q, currency %q", req.Amount, req.IdempotencyKey, req.Currency)
	}
	h := sha256.Sum256([]byte(req.Scope.MerchantID + "/" + string(req.Scope.Env) + "/" + req.IdempotencyKey))
	return ports.PayoutResult{RailRef: "sbpo_" + hex.EncodeToString(h[:12])}, nil
}
