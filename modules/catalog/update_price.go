package catalog

import (
	"context"

	"github.com/kassa-pay/kassa/core"
)

// PricePatch is an update of a price's mutable fields (D13). A nil field is left untouched;
// Nickname and LookupKey "" unset, TaxBehavior "" means unspecified. Metadata is merged key by
// key, "" deleting a key. Immutable lists the immutable fields the request carried
// (unit_amount, currency, recurring, type); any of them gives parameter_immutable.
//
// Deactivating the product's default price keeps default_price pointing at it (as Stripe
// does); re-activating a price whose lookup_key another active price took gives
// lookup_key_taken.
type PricePatch struct {
	Active      *bool
	Nickname    *string
	LookupKey   *string
	TaxBehavior *string
	Metadata    map[string]string
	Immutable   []string
}

// UpdatePrice changes a price of the product under the product's row lock.
func (s *Service) UpdatePrice(ctx context.Context, scope core.Scope, productID, priceID string, patch PricePatch) (*Price, error) {
	if err := patch.checkImmutable(); err != nil {
		return nil, err
	}
	now, err := s.now(ctx, scope)
	if err != nil {
		return nil, err
	}
	var out *Price
	_, err = s.updateProduct(ctx, scope, productID, func(ctx context.Context, w Writer, p *Product) error {
		pr := p.Price(priceID)
		if pr == nil {
			return core.NotFound("price", "price_id", priceID)
		}
		if err := pr.Apply(patch, now); err != nil {
			return err
		}
		out = pr
		return nil
	})
	if err != nil {
		return nil, lookupKeyTaken(productNotFound(err, productID), "lookup_key")
	}
	return out, nil
}
