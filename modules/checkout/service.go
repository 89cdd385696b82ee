// Package checkout holds hosted checkout sessions: their creation rules, their state machine
// (interface 3.1, D6) and their expiry, observed lazily on read and by the background sweep.
// It is pure: storage, prices and clocks come through ports.
package checkout

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/ports"
)

// Service is the checkout use cases.
type Service struct {
	store Store
	// uow runs every change of an existing session (cancel, expire, lazy expiry, the sweep)
	// over the sessions, the outbox and payments' repositories (Tx); the charges run in it too,
	// through the charger's checkout kind (BindPayableKind).
	uow          ports.UnitOfWorkOf[Tx]
	prices       PriceLookup
	clocks       ports.Clocks
	checkoutBase string
	// charger runs the charge protocol of payments (Confirm, ResolveAction); it must have
	// checkout's payable kind (BindPayableKind over the same unit of work).
	charger *payments.Charger
	// merchants reads a session's merchant for its buyer.
	merchants MerchantNames
	// subs starts the subscriptions of subscription-mode sessions (SetSubscriptions).
	subs Subscriptions
}

// Deps are what the checkout use cases need; every one is required.
type Deps struct {
	// Store inserts and reads sessions; UoW changes them.
	Store  Store
	UoW    ports.UnitOfWorkOf[Tx]
	Prices PriceLookup
	Clocks ports.Clocks
	// CheckoutBaseURL is the public base URL of the checkout origin (a trailing slash is
	// dropped).
	CheckoutBaseURL string
	// Charger is the charge protocol of payments, with checkout's payable kind bound
	// (BindPayableKind(UoW)). Its processors decide which environments can charge: one
	// without (live, until a live processor adapter exists) refuses charges cleanly (409
	// merchant_not_ready when the merchant is not onboarded, else 503 processor_unavailable).
	Charger *payments.Charger
	// Merchants reads the merchant of a session for its buyer (the buyer use cases).
	Merchants MerchantNames
	// Subscriptions starts the subscriptions of subscription-mode sessions (billing). Optional:
	// without it a subscription-mode session is refused at creation (400 mode_unsupported).
	Subscriptions Subscriptions
}

// NewService wires the checkout use cases. Every dependency is required.
func NewService(d Deps) (*Service, error) {
	if d.Store == nil || d.UoW == nil || d.Prices == nil || d.Clocks == nil || d.Charger == nil || d.Merchants == nil {
		return nil, errors.New("checkout: the store, the unit of work, the price lookup, the clocks, the charger and the merchants are required")
	}
	if d.CheckoutBaseURL == "" {
		return nil, errors.New("checkout: the checkout base URL is required")
	}
	return &Service{
		store:        d.Store,
		uow:          d.UoW,
		prices:       d.Prices,
		clocks:       d.Clocks,
		checkoutBase: strings.TrimRight(d.CheckoutBaseURL, "/"),
		charger:      d.Charger,
		merchants:    d.Merchants,
		subs:         d.Subscriptions,
	}, nil
}

// expire expires s (locked in tx, and open) and saves it, with its checkout.session.expired
// event stamped at `at`, in the unit of work tx.
func expire(ctx context.Context, tx Tx, s *Session, at time.Time) error {
	if err := s.Expire(); err != nil {
		return err
	}
	abandoned := s.abandonPending(at) // a charge left waiting for 3-D Secure ends with the session
	if err := tx.Sessions().Save(ctx, s); err != nil {
		return err
	}
	if abandoned != nil {
		if err := tx.Outbox().Add(ctx, *abandoned); err != nil {
			return err
		}
	}
	return tx.Outbox().Add(ctx, core.NewEvent(EventExpired, s.Scope(), at, SessionEvent{Session: s}))
}

// expiryTime is when a due session expired: its expires_at. Lazy and swept expiries are thus
// stamped with the same instant whoever notices them first, and a test clock advance produces
// its events in time order.
func expiryTime(s *Session) time.Time { return s.ExpiresAt() }

// sessionNotFound maps the store's ErrNotFound for a session id to the documented 404
// (resource_missing, param `id`, the path parameter); other errors pass.
func sessionNotFound(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return core.NotFound("session", "id", id)
	}
	return err
}

// unknownCursor maps the store's ErrUnknownCursor to the documented 400 of q's cursor; other
// errors pass.
func unknownCursor(err error, q core.ListQuery) error {
	if errors.Is(err, ErrUnknownCursor) {
		return q.UnknownCursor()
	}
	return err
}
