package identity

import (
	"context"
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Names of the keys every new merchant gets.
const (
	DefaultTestKeyName = "Default test key"
	DefaultLiveKeyName = "Default live key"
)

// ErrOwnerEmailTaken is the 409 of a merchant whose owner would be a dashboard user with an
// e-mail another user already signs in with.
var ErrOwnerEmailTaken = core.NewError(core.TypeResourceConflict, "email_in_use", "email",
	"A dashboard user with this e-mail already exists; choose another e-mail for the owner.")

// CreateMerchant creates a merchant with one test and one live key, and its first dashboard
// user when in.OwnerPassword is set, in one transaction (ErrOwnerEmailTaken when a dashboard
// user already has that e-mail). The secrets are returned once and never stored.
func (s *Service) CreateMerchant(ctx context.Context, in MerchantInput) (m *Merchant, testSecret, liveSecret string, err error) {
	now := s.clock.Now()
	m, err = NewMerchant(in, now)
	if err != nil {
		return nil, "", "", err
	}
	testKey, testSecret, err := NewAPIKey(m.ID(), DefaultTestKeyName, core.EnvTest, now)
	if err != nil {
		return nil, "", "", err
	}
	liveKey, liveSecret, err := NewAPIKey(m.ID(), DefaultLiveKeyName, core.EnvLive, now)
	if err != nil {
		return nil, "", "", err
	}
	var owner *User
	if in.OwnerPassword != nil {
		if owner, err = NewUser(m.ID(), m.Email(), *in.OwnerPassword, now); err != nil {
			return nil, "", "", err
		}
	}
	if err := s.store.CreateMerchant(ctx, m, []*APIKey{testKey, liveKey}, owner); err != nil {
		if errors.Is(err, ErrEmailInUse) {
			return nil, "", "", ErrOwnerEmailTaken
		}
		return nil, "", "", err
	}
	return m, testSecret, liveSecret, nil
}
