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
// postgres store (identitytest.RunStore, store_contract_test.go). It keeps snapshots, as a
// database keeps rows, and rehydrates on every read.
type memStore struct {
	mu        sync.Mutex
	merchants map[string]MerchantSnapshot
	keys      map[string]APIKeySnapshot
	seq       map[string]int // insertion order of keys, the tie-break of equal Created
	users     []UserSnapshot
	touches   int
	failNext  error
}

func newMemStore() *memStore {
	return &memStore{merchants: map[string]MerchantSnapshot{}, keys: map[string]APIKeySnapshot{}, seq: map[string]int{}}
}

func (s *memStore) CreateMerchant(_ context.Context, m *Merchant, keys []*APIKey, owner *User) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failNext; err != nil {
		s.failNext = nil
		return err
	}
	if owner != nil {
		for _, u := range s.users {
			if strings.EqualFold(u.Email, owner.Email()) {
				return ErrEmailInUse
			}
		}
	}
	s.merchants[m.ID()] = m.Snapshot()
	for _, k := range keys {
		s.putKey(k)
	}
	if owner != nil {
		s.users = append(s.users, owner.Snapshot())
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
	return RehydrateMerchant(m), nil
}

func (s *memStore) SetOnboarded(_ context.Context, id string) (*Merchant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.merchants[id]
	if !ok {
		return nil, ErrNotFound
	}
	m := RehydrateMerchant(r)
	m.Onboard()
	s.merchants[id] = m.Snapshot()
	return m, nil
}

func (s *memStore) CreateKey(_ context.Context, k *APIKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.merchants[k.MerchantID()]; !ok {
		return ErrNotFound
	}
	s.putKey(k)
	return nil
}

// putKey stores a snapshot of k; s.mu is held.
func (s *memStore) putKey(k *APIKey) {
	s.keys[k.ID()] = k.Snapshot()
	s.seq[k.ID()] = len(s.seq)
}

func (s *memStore) ListKeys(_ context.Context, merchantID string) ([]*APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*APIKey
	for _, k := range s.keys {
		if k.MerchantID == merchantID {
			out = append(out, RehydrateAPIKey(k))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created().Equal(out[j].Created()) {
			return out[i].Created().After(out[j].Created())
		}
		return s.seq[out[i].ID()] > s.seq[out[j].ID()]
	})
	return out, nil
}

func (s *memStore) ListScopeKeys(ctx context.Context, scope core.Scope) ([]*APIKey, error) {
	all, _ := s.ListKeys(ctx, scope.MerchantID)
	var out []*APIKey
	for _, k := range all {
		if k.Env() == scope.Env {
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
	r, ok := s.keys[keyID]
	if !ok {
		return nil, ErrNotFound
	}
	k := RehydrateAPIKey(r)
	k.Revoke(at)
	s.keys[keyID] = k.Snapshot()
	return k, nil
}

func (s *memStore) KeyByHash(_ context.Context, hash []byte) (*AuthRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if string(k.SecretHash) == string(hash) {
			return &AuthRecord{Key: RehydrateAPIKey(k), Onboarded: s.merchants[k.MerchantID].Onboarded}, nil
		}
	}
	return nil, ErrNotFound
}

func (s *memStore) TouchKey(_ context.Context, scope core.Scope, keyID string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touches++
	if r, ok := s.keys[keyID]; ok && r.MerchantID == scope.MerchantID && r.Env == scope.Env {
		k := RehydrateAPIKey(r)
		k.Touch(at)
		s.keys[keyID] = k.Snapshot()
	}
	return nil
}
