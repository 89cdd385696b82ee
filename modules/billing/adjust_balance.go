package billing

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// MaxBalanceDescription is the longest note of an adjustment, in characters.
const MaxBalanceDescription = 350

// Adjustment is a change of a customer's balance the merchant makes by hand: Amount in minor
// units of Currency, negative credits the customer (the next invoices take it), positive is
// owed (the next invoice adds it).
type Adjustment struct {
	Amount      int64
	Currency    string
	Description string
}

// check validates the adjustment and answers its currency: Amount is not zero and at most the
// maximum amount either way (400 amount_invalid), Currency is one Kassa settles in (400
// currency_unsupported), Description at most MaxBalanceDescription characters of valid UTF-8
// (400 description_invalid).
func (a Adjustment) check() (core.Currency, error) {
	if a.Amount == 0 || a.Amount > core.MaxAmount || a.Amount < -core.MaxAmount {
		return "", core.InvalidField("amount", "amount must be a non-zero whole number of minor units between -%d and %d.", core.MaxAmount, core.MaxAmount)
	}
	cur, err := core.ParseCurrency(a.Currency, "currency")
	if err != nil {
		return "", err
	}
	if !utf8.ValidString(a.Description) || utf8.RuneCountInString(a.Description) > MaxBalanceDescription {
		return "", core.InvalidField("description", "description must be at most %d characters.", MaxBalanceDescription)
	}
	return cur, nil
}

// AdjustBalance records an adjustment of customer id's balance (reason adjustment) and answers
// the transaction and the customer's balance in its currency after it. It is written under the
// customer's row lock, in one unit of work, so it never interleaves with an invoice taking the
// balance. Another merchant's or environment's customer is 404 customer_not_found.
func (s *Service) AdjustBalance(ctx context.Context, scope core.Scope, id string, a Adjustment) (*BalanceTransaction, int64, error) {
	cur, err := a.check()
	if err != nil {
		return nil, 0, err
	}
	now, err := s.clocks.Now(ctx, scope)
	if err != nil {
		return nil, 0, err
	}
	var out *BalanceTransaction
	var ending int64
	err = s.uow.Do(ctx, func(ctx context.Context, tx Tx) error {
		c, err := tx.Customers().Lock(ctx, scope, id)
		if err != nil {
			return customerNotFound(err)
		}
		before, err := tx.Customers().Balance(ctx, scope, c.ID(), cur)
		if err != nil {
			return err
		}
		t := newBalanceTransaction(scope, c.ID(), cur, a.Amount, BalanceAdjustment, "", "", now)
		t.Description = a.Description
		if err := tx.Customers().AddBalanceTransaction(ctx, t); err != nil {
			return err
		}
		out, ending = t, before+a.Amount
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, ending, nil
}

// BalanceTransactions pages customer id's balance transactions, newest first (D8 paging); an
// unknown customer is 404 customer_not_found.
func (q *Queries) BalanceTransactions(ctx context.Context, scope core.Scope, id string, lq core.ListQuery) (core.Page[*BalanceTransaction], error) {
	lq, err := lq.Normalize()
	if err != nil {
		return core.Page[*BalanceTransaction]{}, err
	}
	if _, err := q.store.Customer(ctx, scope, id); err != nil {
		return core.Page[*BalanceTransaction]{}, customerNotFound(err)
	}
	page, err := q.reads.BalanceTransactions(ctx, scope, id, lq)
	if errors.Is(err, ErrUnknownCursor) {
		return page, lq.UnknownCursor()
	}
	return page, err
}
