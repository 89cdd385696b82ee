package apps

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// fakeStore is the in-memory apps.Store the use-case tests use; it passes appstest.RunStore.
type fakeStore struct {
	mu            sync.Mutex
	merchants     map[string]bool
	apps          map[string]AppSnapshot
	installations map[string]InstallationSnapshot
	codes         map[string]CodeSnapshot
}

func newFakeStore() *fakeStore {
	return &fakeStore{merchants: map[string]bool{}, apps: map[string]AppSnapshot{}, installations: map[string]InstallationSnapshot{}}
}

func (f *fakeStore) addMerchant(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.merchants[id] = true
}

func (f *fakeStore) CreateApp(_ context.Context, a *App) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apps[a.ID()] = a.Snapshot()
	return nil
}

func (f *fakeStore) GetApp(_ context.Context, id string) (*App, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.apps[id]
	if !ok {
		return nil, ErrNotFound
	}
	return RehydrateApp(s).withCopy(), nil
}

func (a *App) withCopy() *App { return RehydrateApp(a.Snapshot()) }

func (f *fakeStore) CreateInstallation(_ context.Context, i *Installation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := i.Snapshot()
	if _, ok := f.apps[v.AppID]; !ok {
		return ErrNotFound
	}
	if !f.merchants[v.MerchantID] {
		return ErrUnknownMerchant
	}
	for _, o := range f.installations {
		if o.AppID == v.AppID && o.MerchantID == v.MerchantID && o.RevokedAt == nil {
			return ErrInstalled
		}
	}
	f.installations[v.ID] = v
	return nil
}

func (f *fakeStore) GetInstallation(_ context.Context, id string) (*Installation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.installations[id]
	if !ok {
		return nil, ErrNotFound
	}
	return RehydrateInstallation(s).withCopy(), nil
}

func (i *Installation) withCopy() *Installation { return RehydrateInstallation(i.Snapshot()) }

func (f *fakeStore) InstallationByTokenHash(_ context.Context, hash []byte) (*Installation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.installations {
		if bytes.Equal(s.LiveTokenHash, hash) || bytes.Equal(s.TestTokenHash, hash) {
			return RehydrateInstallation(s).withCopy(), nil
		}
	}
	return nil, ErrNotFound
}

func (f *fakeStore) ActiveInstallations(_ context.Context, merchantID string) ([]*Installation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Installation
	for _, s := range f.installations {
		if s.MerchantID == merchantID && s.RevokedAt == nil {
			out = append(out, RehydrateInstallation(s).withCopy())
		}
	}
	slices.SortFunc(out, func(a, b *Installation) int {
		if c := b.Created().Compare(a.Created()); c != 0 {
			return c
		}
		return strings.Compare(b.ID(), a.ID())
	})
	return out, nil
}

func (f *fakeStore) TouchInstallation(_ context.Context, id string, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.installations[id]
	if !ok || s.RevokedAt != nil || (s.LastUsedAt != nil && !s.LastUsedAt.Before(at.Add(-time.Minute))) {
		return nil
	}
	s.LastUsedAt = &at
	f.installations[id] = s
	return nil
}

func (f *fakeStore) RevokeInstallation(_ context.Context, id string, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.installations[id]
	if !ok || s.RevokedAt != nil {
		return ErrNotFound
	}
	s.RevokedAt = &at
	f.installations[id] = s
	return nil
}

func (f *fakeStore) AppByClientID(_ context.Context, clientID string) (*App, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.apps {
		if a.ClientID == clientID {
			return RehydrateApp(a).withCopy(), nil
		}
	}
	return nil, ErrNotFound
}

func (f *fakeStore) CreateCode(_ context.Context, c CodeSnapshot) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.codes == nil {
		f.codes = map[string]CodeSnapshot{}
	}
	f.codes[string(c.Hash)] = c
	return nil
}

func (f *fakeStore) RedeemCode(_ context.Context, hash []byte, now time.Time, fn func(CodeSnapshot, *Installation) (*Installation, error)) (*Installation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.codes[string(hash)]
	if !ok {
		return nil, ErrNotFound
	}
	if c.UsedAt != nil {
		if c.InstallationID != nil {
			if s := f.installations[*c.InstallationID]; s.RevokedAt == nil {
				s.RevokedAt = &now
				f.installations[s.ID] = s
			}
		}
		return nil, ErrCodeUsed
	}
	c.UsedAt = &now
	f.codes[string(hash)] = c
	var current *Installation
	for _, s := range f.installations {
		if s.AppID == c.AppID && s.MerchantID == c.MerchantID && s.RevokedAt == nil {
			current = RehydrateInstallation(s).withCopy()
		}
	}
	inst, err := fn(c, current)
	if err != nil {
		return nil, err
	}
	v := inst.Snapshot()
	f.installations[v.ID] = v
	id := v.ID
	c.InstallationID = &id
	f.codes[string(hash)] = c
	return inst.withCopy(), nil
}
