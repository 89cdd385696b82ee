package checkout

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

// Status is the state of a checkout session (interface 3.1).
type Status string

const (
	StatusOpen     Status = "open"
	StatusComplete Status = "complete"
	StatusExpired  Status = "expired"
	StatusCanceled Status = "canceled"
)

// Valid reports whether st is one of the four documented states.
func (st Status) Valid() bool {
	switch st {
	case StatusOpen, StatusComplete, StatusExpired, StatusCanceled:
		return true
	}
	return false
}

// Mode is the request's `mode` (echoed as `checkout_mode`, D6): a one-off payment or the first
// payment of a subscription.
type Mode string

const (
	ModePayment      Mode = "payment"
	ModeSubscription Mode = "subscription"
)

// Lifetime of a session and of its client_secret (interface 8).
const Lifetime = 24 * time.Hour

// EventExpired is the event fired once when a session expires (interface 6.1, D6).
const EventExpired = core.EventCheckoutSessionExpired

// LineItem is one display line of a session (interface 4.1: display only, never fetched in
// payment mode). Quantity is at least 1 once the session exists.
type LineItem struct {
	Name      string  `json:"name"`
	Quantity  int     `json:"quantity"`
	Amount    *int64  `json:"amount,omitempty"`
	ImageURL  *string `json:"image_url,omitempty"`
	PriceID   *string `json:"price_id,omitempty"`
	ProductID *string `json:"product_id,omitempty"`
}

// Session is the checkout session aggregate. Its fields are unexported: it is built by
// newSession (which the create use case reaches only after validation) or rebuilt from
// storage by RehydrateSession, and it changes state only through its transition methods.
type Session struct {
	id                 string
	scope              core.Scope
	mode               Mode
	status             Status
	amount             int64
	currency           core.Currency
	clientSecret       string
	checkoutURL        string
	embedURL           string
	customerName       string
	customerEmail      string
	reference          *string
	description        *string
	successURL         *string
	cancelURL          *string
	lineItems          []LineItem
	metadata           map[string]string
	cancellationReason *string
	// subscription is the subscription a subscription-mode session started (sub_…).
	subscription *string
	created      time.Time
	expiresAt    time.Time
	// payment is the payment of a complete session: set by Complete, or attached by the
	// store when it loads a complete session. nil otherwise.
	payment *payments.Payment
	// buyer is the buyer-side bookkeeping of confirmations (buyer_state.go).
	buyer BuyerState
	// changed is what changed since the session was built or loaded (Changes).
	changed Changes
}

// Changes is the set of parts of a session that changed since it was loaded (or created), as
// its transitions record them, so that a repository writes exactly those (SessionRepository
// Save) without comparing states. Only these parts ever change after creation.
type Changes uint8

const (
	// ChangedStatus: the status, and with it the cancellation reason (Expire, Cancel, and
	// completion by a charge).
	ChangedStatus Changes = 1 << iota
	// ChangedBuyer: the buyer's bookkeeping (BuyerState: attempts, the charge in flight,
	// declines, the charge waiting for 3-D Secure).
	ChangedBuyer
	// ChangedSubscription: the subscription a subscription-mode session started.
	ChangedSubscription
)

// Has reports whether every part of c2 is in c.
func (c Changes) Has(c2 Changes) bool { return c&c2 == c2 }

// Changes reports what changed on s since it was loaded or created; 0 when nothing did.
func (s *Session) Changes() Changes { return s.changed }

// SessionSnapshot is the full state of a session as storage keeps it. It is the only way in
// and out of storage: Snapshot to save, RehydrateSession to load.
type SessionSnapshot struct {
	ID                 string
	Scope              core.Scope
	Mode               Mode
	Status             Status
	Amount             int64
	Currency           core.Currency
	ClientSecret       string
	CheckoutURL        string
	EmbedURL           string
	CustomerName       string
	CustomerEmail      string
	Reference          *string
	Description        *string
	SuccessURL         *string
	CancelURL          *string
	LineItems          []LineItem
	Metadata           map[string]string
	CancellationReason *string
	// Subscription is the subscription a subscription-mode session started; nil otherwise.
	Subscription *string
	Created      time.Time
	ExpiresAt    time.Time
	// Payment is the session's payment when it is complete. Storage keeps it in its own
	// table; a store attaches it when it loads a complete session (and must, so that the
	// session renders with its payment, interface 2.2).
	Payment *payments.Payment
	// Buyer is the bookkeeping of the buyer's confirmations: attempts, declines and the
	// charge waiting for 3-D Secure (buyer_state.go).
	Buyer BuyerState
}

// RehydrateSession rebuilds a session from storage without re-validating it: what was stored
// was valid when it was stored. It reports no Changes.
func RehydrateSession(s SessionSnapshot) *Session {
	return &Session{
		id: s.ID, scope: s.Scope, mode: s.Mode, status: s.Status, amount: s.Amount,
		currency: s.Currency, clientSecret: s.ClientSecret, checkoutURL: s.CheckoutURL,
		embedURL: s.EmbedURL, customerName: s.CustomerName, customerEmail: s.CustomerEmail,
		reference: s.Reference, description: s.Description, successURL: s.SuccessURL,
		cancelURL: s.CancelURL, lineItems: slices.Clone(s.LineItems), metadata: maps.Clone(s.Metadata),
		cancellationReason: s.CancellationReason, subscription: s.Subscription, created: s.Created, expiresAt: s.ExpiresAt,
		payment: clonePayment(s.Payment), buyer: s.Buyer.clone(),
	}
}

func clonePayment(p *payments.Payment) *payments.Payment {
	if p == nil {
		return nil
	}
	return payments.RehydratePayment(p.Snapshot())
}

// Snapshot returns the session's full state for storage.
func (s *Session) Snapshot() SessionSnapshot {
	return SessionSnapshot{
		ID: s.id, Scope: s.scope, Mode: s.mode, Status: s.status, Amount: s.amount,
		Currency: s.currency, ClientSecret: s.clientSecret, CheckoutURL: s.checkoutURL,
		EmbedURL: s.embedURL, CustomerName: s.customerName, CustomerEmail: s.customerEmail,
		Reference: s.reference, Description: s.description, SuccessURL: s.successURL,
		CancelURL: s.cancelURL, LineItems: slices.Clone(s.lineItems), Metadata: maps.Clone(s.metadata),
		CancellationReason: s.cancellationReason, Subscription: s.subscription, Created: s.created, ExpiresAt: s.expiresAt,
		Payment: clonePayment(s.payment), Buyer: s.buyer.clone(),
	}
}

// sessionFields are the validated inputs of a new session.
type sessionFields struct {
	mode          Mode
	amount        int64
	currency      core.Currency
	customerName  string
	customerEmail string
	reference     *string
	description   *string
	successURL    *string
	cancelURL     *string
	lineItems     []LineItem
	metadata      map[string]string
}

// newSession opens a session at `now` with fresh id and client secret. checkoutBase is the
// public base URL of the checkout origin, without a trailing slash. The fields must already
// have passed the create rules (validateCreate).
func newSession(scope core.Scope, f sessionFields, now time.Time, checkoutBase string) *Session {
	id := core.NewID(core.PrefixSession)
	secret := id + "_secret_" + core.NewSecretPart()
	return &Session{
		id:            id,
		scope:         scope,
		mode:          f.mode,
		status:        StatusOpen,
		amount:        f.amount,
		currency:      f.currency,
		clientSecret:  secret,
		checkoutURL:   checkoutBase + "/c/" + id + "?cs=" + secret,
		embedURL:      checkoutBase + "/embed/" + id + "?cs=" + secret,
		customerName:  f.customerName,
		customerEmail: f.customerEmail,
		reference:     f.reference,
		description:   f.description,
		successURL:    f.successURL,
		cancelURL:     f.cancelURL,
		lineItems:     f.lineItems,
		metadata:      f.metadata,
		created:       now,
		expiresAt:     now.Add(Lifetime),
	}
}

func (s *Session) ID() string                    { return s.id }
func (s *Session) Scope() core.Scope             { return s.scope }
func (s *Session) Environment() core.Environment { return s.scope.Env }
func (s *Session) Mode() Mode                    { return s.mode }
func (s *Session) Status() Status                { return s.status }
func (s *Session) Amount() int64                 { return s.amount }
func (s *Session) Currency() core.Currency       { return s.currency }
func (s *Session) ClientSecret() string          { return s.clientSecret }
func (s *Session) CheckoutURL() string           { return s.checkoutURL }
func (s *Session) EmbedURL() string              { return s.embedURL }
func (s *Session) CustomerName() string          { return s.customerName }
func (s *Session) CustomerEmail() string         { return s.customerEmail }
func (s *Session) Reference() *string            { return s.reference }
func (s *Session) Description() *string          { return s.description }
func (s *Session) SuccessURL() *string           { return s.successURL }
func (s *Session) CancelURL() *string            { return s.cancelURL }
func (s *Session) LineItems() []LineItem         { return slices.Clone(s.lineItems) }
func (s *Session) Metadata() map[string]string   { return maps.Clone(s.metadata) }
func (s *Session) CancellationReason() *string   { return s.cancellationReason }
func (s *Session) Subscription() *string         { return s.subscription }
func (s *Session) Created() time.Time            { return s.created }
func (s *Session) ExpiresAt() time.Time          { return s.expiresAt }

// Payment returns the payment of a complete session (a copy), or nil.
func (s *Session) Payment() *payments.Payment { return clonePayment(s.payment) }

// PaymentStatus is where the money of a completed session stands (D6).
type PaymentStatus string

const (
	PaymentPaid       PaymentStatus = "paid"
	PaymentProcessing PaymentStatus = "processing"
	PaymentFailed     PaymentStatus = "failed"
)

// PaymentStatus returns the session's payment_status: "" while it has no payment; paid once
// its payment succeeded (refunds and disputes keep it paid: the money was received),
// processing while a delayed method settles, failed when it did not.
func (s *Session) PaymentStatus() PaymentStatus {
	if s.payment == nil {
		return ""
	}
	switch s.payment.Status() {
	case payments.StatusProcessing:
		return PaymentProcessing
	case payments.StatusFailed:
		return PaymentFailed
	case payments.StatusSucceeded, payments.StatusPartiallyRefunded, payments.StatusRefunded, payments.StatusDisputed: // the money was received
	}
	return PaymentPaid
}

// IsDue reports whether the session is open, its lifetime has run out at now, and no charge
// of it is in flight. A session being charged (BuyerState.Charging) is never due: the buyer's
// money may be moving, so it waits for the outcome (which completes it or leaves it open, and
// then due) instead of expiring under the charge.
func (s *Session) IsDue(now time.Time) bool {
	return s.status == StatusOpen && !now.Before(s.expiresAt) && s.buyer.Charging == ""
}

// Expire moves an open session to expired. A complete session answers
// ErrSessionAlreadyCompleted; an expired or canceled one ErrSessionExpired (D6); one with a
// charge in flight payments.ErrChargeInProgress.
func (s *Session) Expire() error {
	switch s.status {
	case StatusOpen:
		if s.buyer.Charging != "" {
			return payments.ErrChargeInProgress
		}
		s.status = StatusExpired
		s.changed |= ChangedStatus
		return nil
	case StatusComplete:
		return ErrSessionAlreadyCompleted
	default:
		return ErrSessionExpired
	}
}

// CancellationCustomerCanceled is the cancellation_reason of a session the buyer canceled on
// the hosted page (D6).
const CancellationCustomerCanceled = "customer_canceled"

// checkOpen is the guard of every transition out of open: a complete session answers
// ErrSessionAlreadyCompleted, an expired or canceled one ErrSessionExpired, and an open
// session whose lifetime has run out at now is expired (D6: lazy expiry), never completed or
// canceled, so it answers ErrSessionExpired too.
func (s *Session) checkOpen(now time.Time) error {
	switch s.status {
	case StatusOpen:
		if s.IsDue(now) {
			return ErrSessionExpired
		}
		return nil
	case StatusComplete:
		return ErrSessionAlreadyCompleted
	default:
		return ErrSessionExpired
	}
}

// complete moves an open session to complete with its payment p, created at now for this
// session (interface 3.1: "payment completed") by the charge in flight, which it ends. The
// guards are those of checkOpen. A payment of another session or scope is a bug and answers a
// plain error.
func (s *Session) complete(p *payments.Payment, now time.Time) error {
	if err := s.checkOpen(now); err != nil {
		return err
	}
	if p == nil || p.SessionID() == nil || *p.SessionID() != s.id || p.Scope() != s.scope {
		return errors.New("checkout: complete: the payment does not belong to this session")
	}
	s.status = StatusComplete
	s.payment = clonePayment(p)
	s.changed |= ChangedStatus
	return nil
}

// Cancel moves an open session to canceled with cancellation_reason customer_canceled (D6:
// the buyer pressed "Cancel" on the hosted page). The guards are those of checkOpen; a session
// with a charge in flight answers payments.ErrChargeInProgress.
func (s *Session) Cancel(now time.Time) error {
	if err := s.checkOpen(now); err != nil {
		return err
	}
	if s.buyer.Charging != "" {
		return payments.ErrChargeInProgress
	}
	r := CancellationCustomerCanceled
	s.status = StatusCanceled
	s.cancellationReason = &r
	s.changed |= ChangedStatus
	return nil
}
