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
func (s *Service) CreateMerchant(ctx context.Context, in NewMerchant) (m *Merchant, testSecret, liveSecret string, err error) {
	in, err = normalizeMerchant(in)
	if err != nil {
		return nil, "", "", err
	}
	now := s.clock.Now()
	m = &Merchant{
		ID: core.NewID(core.PrefixMerchant), Name: in.Name, Country: in.Country, Email: in.Email,
		Onboarded: in.Onboarded, Created: now,
	}
	testKey, testSecret := newKeyRecord(m.ID, DefaultTestKeyName, core.EnvTest, now)
	liveKey, liveSecret := newKeyRecord(m.ID, DefaultLiveKeyName, core.EnvLive, now)
	var owner *User
	if in.OwnerPassword != nil {
		hash, err := HashPassword(*in.OwnerPassword)
		if err != nil {
			return nil, "", "", err
		}
		owner = &User{ID: core.NewID(PrefixUser), MerchantID: m.ID, Email: in.Email, PasswordHash: hash, Created: now}
	}
	if err := s.store.CreateMerchant(ctx, m, []*KeyRecord{testKey, liveKey}, owner); err != nil {
		if errors.Is(err, ErrEmailInUse) {
			return nil, "", "", ErrOwnerEmailTaken
		}
		return nil, "", "", err
	}
	return m, testSecret, liveSecret, nil
}
