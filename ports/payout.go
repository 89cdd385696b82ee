package ports

import (
	"context"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// PayoutRequest asks a payout rail to send Amount of Currency to the merchant's bank account,
// arriving on ArrivalDate. IdempotencyKey (the payout's po_ id) makes a repeated request
// answer the first one: a payout is sent once however often it is asked for.
type PayoutRequest struct {
	Scope          core.Scope
	IdempotencyKey string
	Amount         int64
	Currency       core.Currency
	ArrivalDate    time.Time
}

// PayoutResult is the rail's answer: its reference of the transfer.
type PayoutResult struct {
	RailRef string
}

// PayoutRail sends payouts to merchants' banks (the sandbox for test; a live adapter for live,
// none yet). Send leaves the process, so it answers ErrInsideTransaction inside a unit of work.
type PayoutRail interface {
	Send(ctx context.Context, req PayoutRequest) (PayoutResult, error)
}
