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

// buyerColumns are the buyer's side of a checkout_sessions row (migrations 00007, 00014):
// confirmation bookkeeping and a charge waiting for 3-D Secure, in the order of buyerStateArgs.
var buyerColumns = []string{"confirm_attempts", "confirm_declines", "charging_attempt", "pending_processor_ref", "pending_method",
	"pending_action", "pending_redirect_url", "pending_card_brand", "pending_card_last4",
	"pending_card_country", "pending_card_funding", "pending_card_exp_month", "pending_card_exp_year"}

// buyerRow is the buyer's side of a checkout_sessions row (migration 00007).
type buyerRow struct {
	ConfirmAttempts     int     `db:"confirm_attempts"`
	ConfirmDeclines     int     `db:"confirm_declines"`
	ChargingAttempt     *string `db:"charging_attempt"`
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
	st := checkout.BuyerState{Attempts: b.ConfirmAttempts, Declines: b.ConfirmDeclines, Charging: deref(b.ChargingAttempt)}
	if b.PendingProcessorRef == nil {
		return st
	}
	p := &checkout.PendingCharge{
		ProcessorRef: *b.PendingProcessorRef,
		Method:       ports.PaymentMethodKind(deref(b.PendingMethod)),
		Action:       checkout.PendingAction{Kind: deref(b.PendingAction), RedirectURL: deref(b.PendingRedirectURL)},
	}
	if b.PendingCardBrand != nil {
		p.Card = &ports.CardInfo{
			Brand: *b.PendingCardBrand, Last4: deref(b.PendingCardLast4), Country: deref(b.PendingCardCountry),
			Funding: deref(b.PendingCardFunding), ExpMonth: derefInt(b.PendingCardExpMonth), ExpYear: derefInt(b.PendingCardExpYear),
		}
	}
	st.Pending = p
	return st
}

func derefInt(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// buyerStateSet is the SET list of an UPDATE that writes the buyer's bookkeeping of a locked
// session from its arguments, the first of which is $first.
func buyerStateSet(first int) string {
	set := make([]string, len(buyerColumns))
	for i, c := range buyerColumns {
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
		ref, method = &p.ProcessorRef, nullIfEmpty(string(p.Method))
		action, redirect = nullIfEmpty(p.Action.Kind), nullIfEmpty(p.Action.RedirectURL)
		if c := p.Card; c != nil {
			brand, last4, country, funding = &c.Brand, &c.Last4, &c.Country, &c.Funding
			expMonth, expYear = nullIfZero(c.ExpMonth), nullIfZero(c.ExpYear)
		}
	}
	return []any{b.Attempts, b.Declines, nullIfEmpty(b.Charging), ref, method, action, redirect, brand, last4, country, funding, expMonth, expYear}
}

// FindByClientSecretHash reads the session whose client_secret_hash is hash (the UNIQUE index
// of 00003), in any scope: the buyer's side holds only the secret. The scope's sandbox clock
// (as the API key lookup does for the merchant API) and the merchant's buyer-facing fields are
// read with it, in the same query: a confirmation reads neither again.
func (st *SessionStore) FindByClientSecretHash(ctx context.Context, hash [32]byte) (checkout.SecretLookup, error) {
	var r struct {
		sessionRow
		FrozenTime        *time.Time `db:"frozen_time"`
		MerchantName      string     `db:"merchant_name"`
		MerchantOnboarded bool       `db:"merchant_onboarded"`
	}
	err := st.hot.get(ctx, &r, sessionBySecretSQL, hash[:])
	s, err := sessionOf(ctx, st.db, &r.sessionRow, err, "")
	if err != nil {
		return checkout.SecretLookup{}, err
	}
	out := checkout.SecretLookup{Session: s, Merchant: checkout.BuyerMerchant{Name: r.MerchantName, Onboarded: r.MerchantOnboarded}}
	if r.FrozenTime != nil && s.Environment() == core.EnvTest {
		t := r.FrozenTime.UTC()
		out.Frozen = &t
	}
	return out, nil
}

// sessionBySecretSQL joins the session's merchant (a foreign key of checkout_sessions, so
// the row is always there) for the buyer's pages: its name, and whether it is onboarded (a
// live charge of a merchant that is not is refused).
var sessionBySecretSQL = `SELECT ` + sessionCols("s") + `, c.frozen_time, m.name AS merchant_name, m.onboarded AS merchant_onboarded
	FROM checkout_sessions s
	JOIN merchants m ON m.id = s.merchant_id
	LEFT JOIN test_clocks c ON c.merchant_id = s.merchant_id AND c.environment = s.environment
	WHERE s.client_secret_hash = $1`
