package payouts

import "github.com/kassa-pay/kassa/core"

// Event types of payouts (merchant webhooks, D16).
const (
	EventPayoutCreated = core.EventPayoutCreated
	EventPayoutPaid    = core.EventPayoutPaid
)

// PayoutEvent is the subject of payout.created and payout.paid: the payout at event time.
type PayoutEvent struct{ Payout *Payout }

// EventObjectID implements core.DomainEvent.
func (e PayoutEvent) EventObjectID() string { return e.Payout.ID() }
