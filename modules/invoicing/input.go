package invoicing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// LineInput is one line of a create or update body. A free-form line has description,
// unit_amount, quantity (default 1) and vat_rate (default "0"); a catalog line has price_id,
// quantity and vat_rate, and takes its description and unit amount from the price.
type LineInput struct {
	Description *string
	Quantity    *int64
	UnitAmount  *int64
	VATRate     *string
	PriceID     *string
}

// Input is a create or update body, with the invoice's own field names. In an update, a field
// left out keeps its value, and line_items replaces every line.
type Input struct {
	Currency      *string
	CustomerName  *string
	CustomerEmail *string
	LineItems     *[]LineInput
	DaysUntilDue  *int
	Memo          *string
	Metadata      *map[string]string
}

// draftOf applies in to base (the current content, or the zero Draft for a create) and checks
// every rule; catalog lines are read through prices.
func (s *Service) draftOf(ctx context.Context, scope core.Scope, base Draft, in Input, create bool) (Draft, error) {
	d := base
	if create {
		d.DaysUntilDue = DefaultDaysUntilDue
		if in.CustomerName == nil {
			return d, core.MissingField("customer_name")
		}
		if in.CustomerEmail == nil {
			return d, core.MissingField("customer_email")
		}
	}
	if in.CustomerName != nil {
		n := strings.TrimSpace(*in.CustomerName)
		if c := utf8.RuneCountInString(n); c < 2 || c > 120 {
			return d, core.InvalidField("customer_name", "customer_name must be 2 to 120 characters.")
		}
		d.CustomerName = n
	}
	if in.CustomerEmail != nil {
		e := strings.TrimSpace(*in.CustomerEmail)
		if !core.ValidEmail(e) {
			return d, core.InvalidField("customer_email", "customer_email must be an e-mail address.")
		}
		d.CustomerEmail = e
	}
	if in.DaysUntilDue != nil {
		if *in.DaysUntilDue < 0 || *in.DaysUntilDue > MaxDaysUntilDue {
			return d, core.InvalidField("days_until_due", "days_until_due must be 0 to %d.", MaxDaysUntilDue)
		}
		d.DaysUntilDue = *in.DaysUntilDue
	}
	if in.Memo != nil {
		m := strings.TrimSpace(*in.Memo)
		if utf8.RuneCountInString(m) > MaxMemo {
			return d, core.InvalidField("memo", "memo must be at most %d characters.", MaxMemo)
		}
		d.Memo = &m
		if m == "" {
			d.Memo = nil
		}
	}
	if in.Metadata != nil {
		if err := core.CheckMetadata(*in.Metadata, "metadata"); err != nil {
			return d, err
		}
		d.Metadata = *in.Metadata
	}
	if in.Currency != nil {
		c, err := core.ParseCurrency(*in.Currency, "currency")
		if err != nil {
			return d, err
		}
		if create || len(d.Lines) == 0 || !hasCatalogLine(d.Lines) || c == d.Currency || in.LineItems != nil {
			d.Currency = c
		} else {
			return d, ErrCurrencyMismatch.At("currency")
		}
	}
	if in.LineItems != nil {
		lines, err := s.linesOf(ctx, scope, *in.LineItems, base.Lines, &d.Currency, in.Currency != nil)
		if err != nil {
			return d, err
		}
		d.Lines = lines
	}
	if d.Currency == "" {
		return d, core.MissingField("currency")
	}
	if t := TotalsOf(d.Lines).Total; t > core.MaxAmount {
		return d, core.ErrAmountTooLarge.At("line_items")
	}
	return d, nil
}

func hasCatalogLine(ls []Line) bool {
	for _, l := range ls {
		if l.Locked {
			return true
		}
	}
	return false
}

// linesOf checks the lines of a body. A catalog line that repeats a locked line of the draft
// (same price, quantity and VAT rate) keeps that line as it was locked, even if its price was
// archived since; any other catalog line must be an active one-time price, whose currency
// fixes the invoice's (currencyGiven: the body named a currency, which then must match).
func (s *Service) linesOf(ctx context.Context, scope core.Scope, in []LineInput, kept []Line, currency *core.Currency, currencyGiven bool) ([]Line, error) {
	if len(in) > MaxLines {
		return nil, ErrTooManyLines
	}
	out := make([]Line, 0, len(in))
	fixed := core.Currency("")
	for n, li := range in {
		p := func(f string) string { return fmt.Sprintf("line_items.%d.%s", n, f) }
		l := Line{Quantity: 1}
		if li.Quantity != nil {
			if *li.Quantity < 1 || *li.Quantity > MaxQuantity {
				return nil, core.InvalidField(p("quantity"), "quantity must be 1 to %d.", MaxQuantity)
			}
			l.Quantity = *li.Quantity
		}
		if li.VATRate != nil {
			r, err := ParseRate(*li.VATRate, p("vat_rate"))
			if err != nil {
				return nil, err
			}
			l.VATRate = r
		}
		if li.PriceID != nil {
			if li.Description != nil {
				return nil, ErrLineLocked.At(p("description"))
			}
			if li.UnitAmount != nil {
				return nil, ErrLineLocked.At(p("unit_amount"))
			}
			line, err := s.catalogLine(ctx, scope, *li.PriceID, l, &kept, p("price_id"))
			if err != nil {
				return nil, err
			}
			if fixed != "" && line.cur != fixed {
				return nil, ErrCurrencyMismatch.At(p("price_id"))
			}
			fixed = line.cur
			out = append(out, line.Line)
			continue
		}
		if li.Description == nil || strings.TrimSpace(*li.Description) == "" {
			return nil, core.MissingField(p("description"))
		}
		desc := strings.TrimSpace(*li.Description)
		if utf8.RuneCountInString(desc) > MaxDescription {
			return nil, core.InvalidField(p("description"), "description must be at most %d characters.", MaxDescription)
		}
		if li.UnitAmount == nil {
			return nil, core.MissingField(p("unit_amount"))
		}
		if *li.UnitAmount < 0 || *li.UnitAmount > core.MaxAmount {
			return nil, core.InvalidField(p("unit_amount"), "unit_amount must be 0 to %d minor units.", core.MaxAmount)
		}
		l.Description, l.UnitAmount = desc, *li.UnitAmount
		out = append(out, l)
	}
	if fixed != "" {
		if currencyGiven && *currency != fixed {
			return nil, ErrCurrencyMismatch.At("currency")
		}
		*currency = fixed
	}
	return out, nil
}

type pricedLine struct {
	Line
	cur core.Currency
}

// catalogLine locks price id into line l (its quantity and VAT rate set): a line of kept with
// the same price, quantity and rate is taken (and removed from kept) as it was locked.
func (s *Service) catalogLine(ctx context.Context, scope core.Scope, id string, l Line, kept *[]Line, param string) (pricedLine, error) {
	for k, old := range *kept {
		if old.Locked && old.PriceID != nil && *old.PriceID == id && old.Quantity == l.Quantity && old.VATRate == l.VATRate {
			*kept = append((*kept)[:k:k], (*kept)[k+1:]...)
			return pricedLine{Line: old, cur: old.Currency}, nil
		}
	}
	pr, err := s.prices.LookupPrice(ctx, scope, id)
	if err != nil {
		var de *core.Error
		if errors.As(err, &de) {
			return pricedLine{}, de.At(param)
		}
		return pricedLine{}, err
	}
	switch {
	case pr.Recurring:
		return pricedLine{}, ErrPriceRecurring.At(param)
	case !pr.Active:
		return pricedLine{}, ErrPriceInactive.At(param)
	}
	pid, prod := pr.ID, pr.ProductID
	l.Description, l.UnitAmount, l.PriceID, l.ProductID, l.Locked = pr.ProductName, pr.UnitAmount, &pid, &prod, true
	l.Currency = pr.Currency
	return pricedLine{Line: l, cur: pr.Currency}, nil
}
