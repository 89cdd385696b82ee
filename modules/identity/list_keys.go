package identity

import "context"

// ListKeys returns the merchant's keys, newest first (revoked ones included).
func (s *Service) ListKeys(ctx context.Context, merchantID string) ([]*APIKey, error) {
	if _, err := s.GetMerchant(ctx, merchantID); err != nil {
		return nil, err
	}
	return s.store.ListKeys(ctx, merchantID)
}
