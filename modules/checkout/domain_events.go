package checkout

// SessionEvent reports a change of a checkout session (completed, expired, canceled, the
// async_payment_* events); data.object is the session with its payment. The charge events
// without a payment (a declined charge, one waiting on the shopper) are payments' own
// (payments.ChargeDeclined, payments.ChargeRequiresAction).
type SessionEvent struct{ Session *Session }

// EventObjectID is the session's id.
func (e SessionEvent) EventObjectID() string { return e.Session.ID() }
