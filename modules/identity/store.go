package identity

import (
	"context"
	"errors"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// Store sentinels. A Store (and a DashboardStore) returns only these, or errors that are not
// the caller's fault; never a documented *core.Error: the use cases decide what the API says
// (ErrMerchantNotFound, ErrAPIKeyNotFound, ErrOwnerEmailTaken, …).
var (
	// ErrNotFound: the merchant, key or session asked for does not exist (in the scope).
	ErrNotFound = errors.New("identity: not found")
	// ErrEmailInUse: a dashboard user (of any merchant) already has the e-mail.
	ErrEmailInUse = errors.New("identity: a dashboard user already has this e-mail")
)

// Store keeps merchants, keys and users. adapters/postgres implements it.
type Store interface {
	// CreateMerchant inserts the merchant, its keys and (when not nil) its owner user in one
	// transaction: all of them or none. It answers ErrEmailInUse, inserting nothing, when a
	// dashboard user (of any merchant) already has the owner's e-mail (case-insensitive).
	CreateMerchant(ctx context.Context, m *Merchant, keys []*APIKey, owner *User) error
	// GetMerchant returns ErrNotFound for an unknown id.
	GetMerchant(ctx context.Context, id string) (*Merchant, error)
	// SetOnboarded marks the merchant onboarded (Merchant.Onboard) and returns it; ErrNotFound
	// for an unknown id.
	SetOnboarded(ctx context.Context, id string) (*Merchant, error)
	// CreateKey inserts a key; ErrNotFound when its merchant does not exist.
	CreateKey(ctx context.Context, k *APIKey) error
	// ListKeys returns the merchant's keys, newest first.
	ListKeys(ctx context.Context, merchantID string) ([]*APIKey, error)
	// ListScopeKeys returns the keys of one merchant environment, newest first.
	ListScopeKeys(ctx context.Context, scope core.Scope) ([]*APIKey, error)
	// RevokeKey revokes the key at at (APIKey.Revoke: revoked_at is set unless it already is)
	// and returns it; ErrNotFound for an unknown id.
	RevokeKey(ctx context.Context, keyID string, at time.Time) (*APIKey, error)
	// RevokeScopeKey is RevokeKey for a key of scope only: ErrNotFound (and nothing changed)
	// for a key of another merchant or environment.
	RevokeScopeKey(ctx context.Context, scope core.Scope, keyID string, at time.Time) (*APIKey, error)
	// KeyByHash finds the key whose secret hashes to hash; ErrNotFound when none does.
	KeyByHash(ctx context.Context, hash []byte) (*AuthRecord, error)
	// TouchKey records a use of the key at at (APIKey.Touch: last_used is set when it is unset
	// or more than a minute older than at), for the key of scope only: a key of another
	// merchant or environment is left unchanged.
	TouchKey(ctx context.Context, scope core.Scope, keyID string, at time.Time) error
}
