package apps

import (
	"context"
	"time"
)

// Store keeps apps and installations. Each method is one statement, or one transaction where
// its comment says so.
type Store interface {
	// CreateApp inserts a new app.
	CreateApp(ctx context.Context, a *App) error
	// GetApp returns the app with id, or ErrNotFound.
	GetApp(ctx context.Context, id string) (*App, error)
	// CreateInstallation inserts a new installation; ErrInstalled when the app already has an
	// installation on the merchant that is not revoked, ErrUnknownMerchant when the merchant
	// does not exist.
	CreateInstallation(ctx context.Context, i *Installation) error
	// GetInstallation returns the installation with id (revoked or not), or ErrNotFound.
	GetInstallation(ctx context.Context, id string) (*Installation, error)
	// InstallationByTokenHash returns the installation one of whose tokens hashes to hash
	// (revoked or not), or ErrNotFound.
	InstallationByTokenHash(ctx context.Context, hash []byte) (*Installation, error)
	// ActiveInstallations returns the merchant's installations that are not revoked, newest
	// first.
	ActiveInstallations(ctx context.Context, merchantID string) ([]*Installation, error)
	// TouchInstallation records a use of the installation at at: it sets last_used_at when the
	// installation is not revoked and last_used_at is unset or more than a minute before at
	// (at most one write a minute, whatever the request rate).
	TouchInstallation(ctx context.Context, id string, at time.Time) error
	// RevokeInstallation sets revoked_at of the installation with id when it is not revoked
	// yet; ErrNotFound when there is no such installation or it was revoked before. In the same
	// transaction it stops the app events delivered for the installation (its app webhook
	// deliveries that are pending, and their endpoints for it), so none is sent afterwards.
	RevokeInstallation(ctx context.Context, id string, at time.Time) error
	// AppByClientID returns the app with the OAuth client id, or ErrNotFound.
	AppByClientID(ctx context.Context, clientID string) (*App, error)
	// CreateCode stores a new authorization code.
	CreateCode(ctx context.Context, c CodeSnapshot) error
	// RedeemCode, in one transaction: locks the code with hash (ErrNotFound when there is
	// none); when it was used before, revokes the installation it issued (if any) at now,
	// commits and answers ErrCodeUsed; otherwise marks it used at now and calls fn with the
	// code and the app's active installation on the merchant (nil when none). When fn
	// answers an installation, the store inserts it (a new one) or updates its scopes and
	// tokens (current), records it as the code's, and returns it; when fn fails, the code
	// stays used, the transaction commits and fn's error is returned.
	RedeemCode(ctx context.Context, hash []byte, now time.Time, fn func(c CodeSnapshot, current *Installation) (*Installation, error)) (*Installation, error)
}
