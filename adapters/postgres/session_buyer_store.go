package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/checkout"
	"github.com/kassa-pay/kassa/ports"
)

// buyerRow is the buyer's side of a checkout_sessions row (migration 00007).
type buyerRow struct {
	ConfirmAttempts     int     `db:"confirm_attempts"`
	ConfirmDeclines     int     `db:"confirm_declines"`
	PendingProcessorRef *string `db:"pending_processor_ref"`
	PendingMethod       *string `db:"pending_method"`
	PendingAction       *string `db:"pending_action"`
	PendingRedirectURL  *string `db:"pending_redirect_url"`
	PendingCardBrand    *string `db:"pending_card_brand"`
	PendingCardLast4    *string `db:"pending_card_last4"`
	PendingCardCountry  *string `db:"pending_card_country"`
	PendingCardFunding  *string `db:"pending_card_funding"`
	PendingCardExpMonth *int    `db:"pending_card_exp_month"`
	PendingCardExpYear  *int    `db:"pending_card_exp_year"`
}

func (b *buyerRow) state() checkout.BuyerState {
	st := checkout.BuyerState{Attempts: b.ConfirmAttempts, Declines: b.ConfirmDeclines}
	if b.PendingProcessorRef == nil {
		return st
	}
	p := &checkout.PendingCharge{
		ProcessorRef: *b.PendingProcessorRef,
		Method:       ports.PaymentMethodKind(pendingStr(b.PendingMethod)),
		Action:       checkout.PendingAction{Kind: pendingStr(b.PendingAction), RedirectURL: pendingStr(b.PendingRedirectURL)},
	}
	if b.PendingCardBrand != nil {
		p.Card = &ports.CardInfo{
			Brand: *b.PendingCardBrand, Last4: pendingStr(b.PendingCardLast4), Country: pendingStr(b.PendingCardCountry),
			Funding: pendingStr(b.PendingCardFunding), ExpMonth: pendingInt(b.PendingCardExpMonth), ExpYear: pendingInt(b.PendingCardExpYear),
		}
	}
	st.Pending = p
	return st
}

func pendingStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func pendingInt(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// buyerStateSet is the SET list of an UPDATE that writes the buyer's bookkeeping of a locked
// session from its arguments, the first of which is $first.
func buyerStateSet(first int) string {
	cols := []string{"confirm_attempts", "confirm_declines", "pending_processor_ref", "pending_method",
		"pending_action", "pending_redirect_url", "pending_card_brand", "pending_card_last4",
		"pending_card_country", "pending_card_funding", "pending_card_exp_month", "pending_card_exp_year"}
	set := make([]string, len(cols))
	for i, c := range cols {
		set[i] = c + " = $" + strconv.Itoa(first+i)
	}
	return strings.Join(set, ", ")
}

// buyerStateArgs are the arguments of buyerStateSet, in its order.
func buyerStateArgs(snap checkout.SessionSnapshot) []any {
	b := snap.Buyer
	var ref, method, action, redirect, brand, last4, country, funding *string
	var expMonth, expYear *int
	if p := b.Pending; p != nil {
		ref, method = &p.ProcessorRef, optStr(string(p.Method))
		action, redirect = optStr(p.Action.Kind), optStr(p.Action.RedirectURL)
		if c := p.Card; c != nil {
			brand, last4, country, funding = &c.Brand, &c.Last4, &c.Country, &c.Funding
			expMonth, expYear = optInt(c.ExpMonth), optInt(c.ExpYear)
		}
	}
	return []any{b.Attempts, b.Declines, ref, method, action, redirect, brand, last4, country, funding, expMonth, expYear}
}

// FindByClientSecretHash reads the session whose client_secret_hash is hash (the UNIQUE index
// of 00003), in any scope: the buyer's side holds only the secret.
// The scope's sandbox clock is read with it (as the API key lookup does for the merchant API).
func (st *SessionStore) FindByClientSecretHash(ctx context.Context, hash [32]byte) (*checkout.Session, *time.Time, error) {
	var r struct {
		sessionRow
		FrozenTime *time.Time `db:"frozen_time"`
	}
	err := st.hot.get(ctx, &r, sessionBySecretSQL, hash[:])
	s, err := sessionOf(ctx, st.db, &r.sessionRow, err, "")
	if err != nil {
		return nil, nil, err
	}
	var frozen *time.Time
	if r.FrozenTime != nil && s.Environment() == core.EnvTest {
		t := r.FrozenTime.UTC()
		frozen = &t
	}
	return s, frozen, nil
}

var sessionBySecretSQL = `SELECT ` + sessionCols("s") + `, c.frozen_time FROM checkout_sessions s
	LEFT JOIN test_clocks c ON c.merchant_id = s.merchant_id AND c.environment = s.environment
	WHERE s.client_secret_hash = $1`
