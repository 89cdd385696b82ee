package checkout

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// BuyerView returns the public view of an open session for the holder of its client secret
// (the hosted page, the browser API). An unknown id, a wrong secret and a session that is no
// longer open all answer ErrSessionExpired (422 session_expired), so the answer reveals
// nothing about sessions whose secret the caller does not hold. A session whose lifetime ran
// out is expired on the way, with its one event (D6: lazy expiry).
func (svc *Service) BuyerView(ctx context.Context, sessionID, clientSecret string) (*BuyerView, error) {
	b, err := svc.buyerSession(ctx, sessionID, clientSecret)
	if err != nil {
		return nil, err
	}
	s := b.session
	v := &BuyerView{Session: s, MerchantName: b.merchant.Name}
	if s.Mode() == ModeSubscription && len(s.lineItems) > 0 && s.lineItems[0].PriceID != nil {
		p, err := svc.prices.LookupPrice(b.ctx, s.Scope(), *s.lineItems[0].PriceID)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		if err == nil && p.Recurring {
			v.Recurring = &RecurringTerms{Interval: p.Interval, IntervalCount: max(p.IntervalCount, 1), TrialDays: p.TrialPeriodDays}
		}
	}
	if p := s.buyer.Pending; p != nil {
		a := p.Action
		v.Pending = &a
	}
	if sub := s.Subscription(); sub != nil && svc.subs != nil {
		a, err := svc.subs.PendingFirst(b.ctx, s.Scope(), *sub)
		if err != nil {
			return nil, err
		}
		v.Pending = a
	}
	return v, nil
}

// buyerRequest is a buyer authorised by buyerSession: the open session (unlocked), its
// merchant as the buyer sees it (read with the session), the scope's time, and ctx carrying the
// clock reading that time came from (core.WithClockReading), so that a use case that reads the
// scope's clock again reads the same time without another query.
type buyerRequest struct {
	ctx      context.Context
	session  *Session
	merchant BuyerMerchant
	now      time.Time
}

// buyerSession authorises a buyer: it finds the session by the hash of clientSecret (one
// query, which also reads the scope's clock and the merchant), checks in constant time that
// the id and the secret are the session's, and that the session is open at the scope's time.
func (svc *Service) buyerSession(ctx context.Context, sessionID, clientSecret string) (buyerRequest, error) {
	if sessionID == "" || clientSecret == "" {
		return buyerRequest{}, ErrSessionExpired
	}
	found, err := svc.store.FindByClientSecretHash(ctx, sha256.Sum256([]byte(clientSecret)))
	if errors.Is(err, ErrNotFound) {
		return buyerRequest{}, ErrSessionExpired
	}
	if err != nil {
		return buyerRequest{}, err
	}
	s := found.Session
	idOK := subtle.ConstantTimeCompare([]byte(s.ID()), []byte(sessionID))
	secretOK := subtle.ConstantTimeCompare([]byte(s.ClientSecret()), []byte(clientSecret))
	if idOK&secretOK != 1 {
		return buyerRequest{}, ErrSessionExpired
	}
	ctx = core.WithClockReading(ctx, s.Scope(), found.Frozen)
	now, err := svc.clocks.Now(ctx, s.Scope())
	if err != nil {
		return buyerRequest{}, err
	}
	if s.IsDue(now) {
		if _, err := svc.expireIfDue(ctx, s.Scope(), s.ID(), now); err != nil {
			return buyerRequest{}, err
		}
		return buyerRequest{}, ErrSessionExpired
	}
	if s.Status() != StatusOpen {
		return buyerRequest{}, ErrSessionExpired
	}
	return buyerRequest{ctx: ctx, session: s, merchant: found.Merchant, now: now}, nil
}

// lockedOpen is the guard of every buyer change under the session's row lock in tx: a due
// session is expired and saved with its event (lapsed: the caller commits that and answers
// ErrSessionExpired), and any session that is not open answers ErrSessionExpired: once
// complete, expired or canceled the client secret is no longer valid (interface 5.2), so a
// second confirm after success is 422 session_expired too.
func lockedOpen(ctx context.Context, tx Tx, s *Session, now time.Time) (lapsed bool, err error) {
	if s.IsDue(now) {
		return true, expire(ctx, tx, s, expiryTime(s))
	}
	if s.Status() != StatusOpen {
		return false, ErrSessionExpired
	}
	return false, nil
}

// BuyerMerchant returns the merchant of s as its buyer sees it (name, onboarding), for
// rendering the answer of CancelByBuyer, whose session is no longer open once it succeeds.
// (Confirm and ResolveAction answer it in ConfirmResult.Merchant, read with the session.)
func (svc *Service) BuyerMerchant(ctx context.Context, s *Session) (BuyerMerchant, error) {
	return svc.merchants.BuyerMerchant(ctx, s.Scope().MerchantID)
}
