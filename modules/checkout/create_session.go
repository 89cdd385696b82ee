package checkout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// CreateInput is the body of POST /v1/checkout/sessions (interface 4.1).
type CreateInput struct {
	Amount        *int64
	Currency      string
	CustomerName  string
	CustomerEmail string
	Mode          string // "" means payment
	Reference     *string
	Description   *string
	SuccessURL    *string
	CancelURL     *string
	LineItems     []LineItem // Quantity 0 means 1
	Metadata      map[string]string
}

// Limits of the create request (interface 8, D2, D13).
const (
	minNameRunes      = 2
	maxNameRunes      = 120
	maxReferenceRunes = 255
	maxDescRunes      = 1000
	maxLineItems      = 100
	maxItemNameRunes  = 250
	maxQuantity       = 9999
)

// Create opens a checkout session. A live caller that has not completed onboarding is refused
// first (409 merchant_not_ready); then mode subscription (ErrSubscriptionModeUnavailable: no
// subscription could be created from the session, so it would charge once and start nothing);
// then the fields are checked in the order of the request table.
func (svc *Service) Create(ctx context.Context, caller core.Caller, in CreateInput) (*Session, error) {
	if caller.Scope.Env == core.EnvLive && !caller.Onboarded {
		return nil, core.ErrMerchantNotReady
	}
	if in.Mode == string(ModeSubscription) && svc.subs == nil {
		return nil, ErrSubscriptionModeUnavailable
	}
	return svc.create(ctx, caller.Scope, in)
}

// create checks the fields and opens the session. A subscription session finally checks its
// price against the catalog: the rules billing builds on, kept and tested while Create refuses
// the mode.
func (svc *Service) create(ctx context.Context, scope core.Scope, in CreateInput) (*Session, error) {
	f, err := validateCreate(in)
	if err != nil {
		return nil, err
	}
	if f.mode == ModeSubscription {
		if err := svc.priceSubscription(ctx, scope, &f); err != nil {
			return nil, err
		}
	}
	now, err := svc.clocks.Now(ctx, scope)
	if err != nil {
		return nil, err
	}
	s := newSession(scope, f, now, svc.checkoutBase)
	if err := svc.uow.Do(ctx, func(ctx context.Context, tx Tx) error { return tx.Sessions().Insert(ctx, s) }); err != nil {
		return nil, err
	}
	return s, nil
}

// priceSubscription fetches line_items[0]'s price and derives the amount from it.
func (svc *Service) priceSubscription(ctx context.Context, scope core.Scope, f *sessionFields) error {
	const param = "line_items.0.price_id"
	item := f.lineItems[0]
	p, err := svc.prices.LookupPrice(ctx, scope, *item.PriceID)
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) && ce.Type == core.TypeNotFound {
			return ce.At(param)
		}
		return err
	}
	if !p.Active {
		return ErrPriceInactive.At(param).Msg("Price '%s' is not active.", p.ID)
	}
	if !p.Recurring {
		return ErrPriceNotRecurring.At(param).Msg("Price '%s' is not recurring; a subscription checkout needs a recurring price.", p.ID)
	}
	if p.Currency != f.currency {
		return core.InvalidField("currency", "currency must be the price's currency (%s).", p.Currency.Lower())
	}
	qty := int64(item.Quantity)
	if p.UnitAmount > 0 && qty > core.MaxAmount/p.UnitAmount {
		return core.ErrAmountTooLarge.At("line_items.0.quantity")
	}
	amount := p.UnitAmount * qty
	if err := core.CheckAmountIn(amount, p.Currency, "line_items.0.quantity"); err != nil {
		return err
	}
	f.amount = amount
	return nil
}

// validateCreate applies every rule that needs no I/O and returns the normalised fields.
func validateCreate(in CreateInput) (sessionFields, error) {
	var f sessionFields
	switch in.Mode {
	case "", string(ModePayment):
		f.mode = ModePayment
	case string(ModeSubscription):
		f.mode = ModeSubscription
	default:
		return f, core.InvalidField("mode", "mode must be 'payment' or 'subscription'.")
	}

	if f.mode == ModePayment {
		if in.Amount == nil {
			return f, core.MissingField("amount")
		}
		cur, _ := core.ParseCurrency(in.Currency, "currency") // checked below; here it only names the minimum's unit
		if err := core.CheckAmountIn(*in.Amount, cur, "amount"); err != nil {
			return f, err
		}
		f.amount = *in.Amount
	} else if in.Amount != nil {
		return f, core.InvalidField("amount", "amount must be omitted in subscription mode; it comes from the price.")
	}

	if in.Currency == "" {
		return f, core.MissingField("currency")
	}
	cur, err := core.ParseCurrency(in.Currency, "currency")
	if err != nil {
		return f, err
	}
	f.currency = cur

	if in.CustomerName == "" {
		return f, core.MissingField("customer_name")
	}
	name := strings.TrimSpace(in.CustomerName)
	if n := utf8.RuneCountInString(name); n < minNameRunes || n > maxNameRunes {
		return f, core.InvalidField("customer_name", "customer_name must be 2 to 120 characters.")
	}
	f.customerName = name

	if in.CustomerEmail == "" {
		return f, core.MissingField("customer_email")
	}
	email := strings.TrimSpace(in.CustomerEmail)
	if !core.ValidEmail(email) {
		return f, core.InvalidField("customer_email", "customer_email must be a valid e-mail address.")
	}
	f.customerEmail = email

	if f.successURL, err = optionalWebURL(in.SuccessURL, "success_url"); err != nil {
		return f, err
	}
	if f.cancelURL, err = optionalWebURL(in.CancelURL, "cancel_url"); err != nil {
		return f, err
	}
	if in.Reference != nil && utf8.RuneCountInString(*in.Reference) > maxReferenceRunes {
		return f, core.InvalidField("reference", "reference must be at most %d characters.", maxReferenceRunes)
	}
	f.reference = in.Reference
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > maxDescRunes {
		return f, core.InvalidField("description", "description must be at most %d characters.", maxDescRunes)
	}
	f.description = in.Description

	if f.lineItems, err = validateLineItems(in.LineItems); err != nil {
		return f, err
	}
	if err = core.CheckMetadata(in.Metadata, "metadata"); err != nil {
		return f, err
	}
	if f.metadata = maps.Clone(in.Metadata); f.metadata == nil {
		f.metadata = map[string]string{}
	}

	if f.mode == ModeSubscription && (len(f.lineItems) == 0 || f.lineItems[0].PriceID == nil) {
		return f, core.MissingField("line_items.0.price_id")
	}
	if f.mode == ModeSubscription && len(f.lineItems) > 1 {
		return f, core.InvalidField("line_items", "A subscription checkout takes exactly one line item: its recurring price.")
	}
	return f, nil
}

func validateLineItems(items []LineItem) ([]LineItem, error) {
	if len(items) > maxLineItems {
		return nil, core.InvalidField("line_items", "line_items may hold at most %d items.", maxLineItems)
	}
	out := make([]LineItem, 0, len(items))
	for i, it := range items {
		p := func(field string) string { return fmt.Sprintf("line_items.%d.%s", i, field) }
		if n := utf8.RuneCountInString(it.Name); n < 1 || n > maxItemNameRunes || strings.TrimSpace(it.Name) == "" {
			return nil, core.InvalidField(p("name"), "%s must be 1 to %d characters.", p("name"), maxItemNameRunes)
		}
		if it.Quantity == 0 {
			it.Quantity = 1
		}
		if it.Quantity < 1 || it.Quantity > maxQuantity {
			return nil, core.InvalidField(p("quantity"), "%s must be between 1 and %d.", p("quantity"), maxQuantity)
		}
		if it.Amount != nil && (*it.Amount < 0 || *it.Amount > core.MaxAmount) {
			return nil, core.InvalidField(p("amount"), "%s must be between 0 and %d.", p("amount"), core.MaxAmount)
		}
		if it.ImageURL != nil {
			if err := core.CheckWebURL(*it.ImageURL, p("image_url")); err != nil {
				return nil, err
			}
		}
		if it.PriceID != nil && !core.HasIDShape(*it.PriceID, core.PrefixPrice) {
			return nil, core.InvalidField(p("price_id"), "%s is not a price id.", p("price_id"))
		}
		if it.ProductID != nil && !core.HasIDShape(*it.ProductID, core.PrefixProduct) {
			return nil, core.InvalidField(p("product_id"), "%s is not a product id.", p("product_id"))
		}
		out = append(out, it)
	}
	return out, nil
}

func optionalWebURL(u *string, param string) (*string, error) {
	if u == nil {
		return nil, nil
	}
	return u, core.CheckWebURL(*u, param)
}
