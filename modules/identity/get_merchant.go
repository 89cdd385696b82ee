package identity

import "context"

// GetMerchant returns the merchant, or 404 merchant_not_found.
func (s *Service) GetMerchant(ctx context.Context, id string) (*Merchant, error) {
	m, err := s.store.GetMerchant(ctx, id)
	if err != nil {
		return nil, notFound(err, ErrMerchantNotFound, "id", "merchant", id)
	}
	return m, nil
}
