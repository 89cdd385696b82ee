package checkout

import (
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// MaxDeclines is the card-testing guard: once this many charges of one session were declined,
// the session refuses further confirmations (422 invalid_state / session_confirm_limit) and
// the buyer needs a new session from the merchant. Ten leaves room for honest typos and
// retries with other cards while making a session useless for testing stolen numbers.
const MaxDeclines = 10

// BuyerState is the buyer-side bookkeeping of an open session, kept on the session row so
// that it changes in the same transaction as the session and its events.
type BuyerState struct {
	// Attempts counts the charge attempts of the session (payments.ChargeAttempt): attempt
	// n uses the processor idempotency key "<session id>:<n>". The counter is written with the
	// attempt, before the processor is called.
	Attempts int
	// Charging is the idempotency key of the attempt in flight ("" when none): set with the
	// attempt, cleared when its outcome is applied (or the processor never received it). While
	// it is set the session neither expires nor takes another charge or a cancellation.
	Charging string
	// Declines counts the declined charges (the card-testing guard, MaxDeclines).
	Declines int
	// Pending is a charge that waits for the buyer (3-D Secure); nil when none does.
	Pending *PendingCharge
}

// PendingCharge is a requires_action charge of the session, with everything ResolveAction
// needs to finish it. It never holds the card number: only what D6 allows to be stored.
type PendingCharge struct {
	ProcessorRef string
	Method       ports.PaymentMethodKind
	Card         *ports.CardInfo
	Action       PendingAction
}

func (b BuyerState) clone() BuyerState {
	if b.Pending != nil {
		p := *b.Pending
		if p.Card != nil {
			c := *p.Card
			p.Card = &c
		}
		b.Pending = &p
	}
	return b
}

// Buyer returns the session's buyer-side bookkeeping (a copy).
func (s *Session) Buyer() BuyerState { return s.buyer.clone() }

// nextAttempt counts a new charge attempt and returns its number (1-based).
func (s *Session) nextAttempt() int {
	s.buyer.Attempts++
	s.changed |= ChangedBuyer
	return s.buyer.Attempts
}

// startCharging records the attempt in flight.
func (s *Session) startCharging(key string) {
	s.buyer.Charging = key
	s.changed |= ChangedBuyer
}

// stopCharging ends the attempt in flight.
func (s *Session) stopCharging() {
	if s.buyer.Charging != "" {
		s.buyer.Charging = ""
		s.changed |= ChangedBuyer
	}
}

// recordDecline counts a declined charge and forgets any pending one.
func (s *Session) recordDecline() {
	s.buyer.Declines++
	s.buyer.Pending = nil
	s.changed |= ChangedBuyer
}

// setPending remembers the charge that waits for the buyer (replacing an abandoned one).
func (s *Session) setPending(p PendingCharge) {
	s.buyer.Pending = &p
	s.changed |= ChangedBuyer
}

// clearPending forgets the pending charge (it completed or was abandoned).
func (s *Session) clearPending() {
	if s.buyer.Pending != nil {
		s.buyer.Pending = nil
		s.changed |= ChangedBuyer
	}
}

// abandonPending forgets the charge waiting for the buyer, if one does, and returns the
// payment_intent.canceled event that reports it, stamped at (nil when none waited): the buyer
// started another charge, or the session was canceled or expired meanwhile.
func (s *Session) abandonPending(at time.Time) *core.Event {
	pc := s.buyer.Pending
	if pc == nil {
		return nil
	}
	s.clearPending()
	ev := core.NewEvent(EventPaymentIntentCanceled, s.Scope(), at, payments.ChargeCanceled{
		SessionID: s.ID(), Amount: s.Amount(), Currency: s.Currency(), Method: pc.Method, Card: pc.Card, At: at})
	return &ev
}
