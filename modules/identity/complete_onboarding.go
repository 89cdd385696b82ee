package identity

import "context"

// CompleteOnboarding marks the merchant onboarded, so live requests may move money. Doing it
// twice is harmless.
func (s *Service) CompleteOnboarding(ctx context.Context, id string) (*Merchant, error) {
	m, err := s.store.SetOnboarded(ctx, id)
	if err != nil {
		return nil, notFound(err, ErrMerchantNotFound, "id", "merchant", id)
	}
	return m, nil
}
