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
	// uow runs every change of an existing session (cancel, expire, lazy expiry, the sweep,
	// the two transactions of a charge) over the sessions, the outbox and the charge use
	// case's repositories (Tx).
	uow          ports.UnitOfWorkOf[Tx]
	prices       PriceLookup
	clocks       ports.Clocks
	checkoutBase string
	// Payments (EnablePayments): nil until wired.
	charger *payments.Charger
	// Buyer use cases (EnableBuyer): nil until wired.
	buyer *BuyerDeps
	// chargeWait bounds how long a confirmation waits for another charge in flight.
	chargeWait time.Duration
}

// NewService wires the checkout use cases: store inserts and reads sessions, uow changes
// them. checkoutBaseURL is the public base URL of the checkout origin (a trailing slash is
// dropped). Every dependency is required.
func NewService(store Store, uow ports.UnitOfWorkOf[Tx], prices PriceLookup, clocks ports.Clocks, checkoutBaseURL string) (*Service, error) {
	if store == nil || uow == nil || prices == nil || clocks == nil {
		return nil, errors.New("checkout: the store, the unit of work, the price lookup and the clocks are required")
	}
	return &Service{
		store:        store,
		uow:          uow,
		prices:       prices,
		clocks:       clocks,
		checkoutBase: strings.TrimRight(checkoutBaseURL, "/"),
		chargeWait:   ChargeWait,
	}, nil
}

// expire expires s (locked in tx, and open) and saves it, with its checkout.session.expired
// event stamped at `at`, in the unit of work tx.
func expire(ctx context.Context, tx Tx, s *Session, at time.Time) error {
	if err := s.Expire(); err != nil {
		return err
	}
	if err := tx.Sessions().Save(ctx, s); err != nil {
		return err
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
