package identity

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// memStore is the in-memory Store of the rule tests. It passes the same contract suite as the
// postgres store (identitytest.RunStore, store_contract_test.go).
type memStore struct {
	mu        sync.Mutex
	merchants map[string]*Merchant
	keys      map[string]*KeyRecord
	seq       map[string]int // insertion order of keys, the tie-break of equal Created
	users     []*User
	touches   int
	failNext  error
}

func newMemStore() *memStore {
	return &memStore{merchants: map[string]*Merchant{}, keys: map[string]*KeyRecord{}, seq: map[string]int{}}
}

func (s *memStore) CreateMerchant(_ context.Context, m *Merchant, keys []*KeyRecord, owner *User) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failNext; err != nil {
		s.failNext = nil
		return err
	}
	if owner != nil {
		for _, u := range s.users {
			if strings.EqualFold(u.Email, owner.Email) {
				return ErrEmailInUse
			}
		}
	}
	c := *m
	s.merchants[m.ID] = &c
	for _, k := range keys {
		s.putKey(k)
	}
	if owner != nil {
		s.users = append(s.users, owner)
	}
	return nil
}

func (s *memStore) GetMerchant(_ context.Context, id string) (*Merchant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.merchants[id]
	if !ok {
		return nil, ErrNotFound
	}
	c := *m
	return &c, nil
}

func (s *memStore) SetOnboarded(ctx context.Context, id string) (*Merchant, error) {
	s.mu.Lock()
	if m, ok := s.merchants[id]; ok {
		m.Onboarded = true
	}
	s.mu.Unlock()
	return s.GetMerchant(ctx, id)
}

func (s *memStore) CreateKey(_ context.Context, k *KeyRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.merchants[k.MerchantID]; !ok {
		return ErrNotFound
	}
	s.putKey(k)
	return nil
}

// putKey stores a copy of k; s.mu is held.
func (s *memStore) putKey(k *KeyRecord) {
	c := *k
	s.keys[k.ID] = &c
	s.seq[k.ID] = len(s.seq)
}

func (s *memStore) ListKeys(_ context.Context, merchantID string) ([]*APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*APIKey
	for _, k := range s.keys {
		if k.MerchantID == merchantID {
			c := k.APIKey
			out = append(out, &c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return s.seq[out[i].ID] > s.seq[out[j].ID]
	})
	return out, nil
}

func (s *memStore) ListScopeKeys(ctx context.Context, scope core.Scope) ([]*APIKey, error) {
	all, _ := s.ListKeys(ctx, scope.MerchantID)
	var out []*APIKey
	for _, k := range all {
		if k.Env == scope.Env {
			out = append(out, k)
		}
	}
	return out, nil
}

func (s *memStore) RevokeScopeKey(ctx context.Context, scope core.Scope, keyID string, at time.Time) (*APIKey, error) {
	s.mu.Lock()
	k, ok := s.keys[keyID]
	s.mu.Unlock()
	if !ok || k.MerchantID != scope.MerchantID || k.Env != scope.Env {
		return nil, ErrNotFound
	}
	return s.RevokeKey(ctx, keyID, at)
}

func (s *memStore) RevokeKey(_ context.Context, keyID string, at time.Time) (*APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[keyID]
	if !ok {
		return nil, ErrNotFound
	}
	if k.RevokedAt == nil {
		k.RevokedAt = &at
	}
	c := k.APIKey
	return &c, nil
}

func (s *memStore) KeyByHash(_ context.Context, hash []byte) (*AuthRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if string(k.SecretHash) == string(hash) {
			return &AuthRecord{Key: k.APIKey, SecretHash: k.SecretHash, Onboarded: s.merchants[k.MerchantID].Onboarded}, nil
		}
	}
	return nil, ErrNotFound
}

func (s *memStore) TouchKey(_ context.Context, scope core.Scope, keyID string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touches++
	if k, ok := s.keys[keyID]; ok && k.MerchantID == scope.MerchantID && k.Env == scope.Env && (k.LastUsed == nil || k.LastUsed.Before(at.Add(-time.Minute))) {
		k.LastUsed = &at
	}
	return nil
}
