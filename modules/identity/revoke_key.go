package identity

import "context"

// RevokeKey revokes the key at once: the next request made with it gets 401. Revoking an
// already revoked key keeps its first revoked_at.
func (s *Service) RevokeKey(ctx context.Context, keyID string) (*APIKey, error) {
	k, err := s.store.RevokeKey(ctx, keyID, s.clock.Now())
	if err != nil {
		return nil, notFound(err, ErrAPIKeyNotFound, "id", "API key", keyID)
	}
	return k, nil
}
