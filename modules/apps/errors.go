package apps

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Documented errors of the operator's app and installation operations.
var (
	ErrNameInvalid         = core.NewError(core.TypeInvalidRequest, "name_invalid", "name", "name must be 1 to 100 characters.")
	ErrRedirectURIInvalid  = core.NewError(core.TypeInvalidRequest, "redirect_uri_invalid", "redirect_uris", "Each redirect URI must be an absolute https URL, or http on a loopback host, without a fragment.")
	ErrRedirectURIsMissing = core.NewError(core.TypeInvalidRequest, "redirect_uris_missing", "redirect_uris", "List at least one redirect URI (at most 10).")
	ErrScopesMissing       = core.NewError(core.TypeInvalidRequest, "scopes_missing", "scopes", "List at least one scope.")
	ErrScopeUnknown        = core.NewError(core.TypeInvalidRequest, "scope_unknown", "scopes", "Unknown scope.")
	ErrScopeDuplicate      = core.NewError(core.TypeInvalidRequest, "scope_duplicate", "scopes", "A scope is listed twice.")
	ErrScopeRequiresReview = core.NewError(core.TypeInvalidRequest, "scope_requires_review", "scopes", "This scope is granted only to apps the operator has reviewed.")
	ErrScopeNotRegistered  = core.NewError(core.TypeInvalidRequest, "scope_not_registered", "scopes", "An installation may only be granted scopes its app registered.")
	ErrAppNotFound         = core.NewError(core.TypeNotFound, "app_not_found", "", "No such app.")
	ErrInstallationMissing = core.NewError(core.TypeNotFound, "installation_not_found", "", "No such installation.")
	ErrMerchantNotFound    = core.NewError(core.TypeNotFound, "merchant_not_found", "merchant_id", "No such merchant.")
	ErrAlreadyInstalled    = core.NewError(core.TypeResourceConflict, "app_already_installed", "", "The app is already installed on this merchant; uninstall it first.")
)

// Documented errors of the App API's authentication (its envelope's type is the code).
var (
	// ErrInvalidToken: the token is missing, malformed, unknown or revoked (401 invalid_token).
	ErrInvalidToken = core.NewError(core.TypeAuthentication, "invalid_token", "",
		"The access token is missing, malformed, unknown or revoked. Send Authorization: Bearer <at_live_… or at_test_… token>.")
	// ErrInsufficientScope: the installation was not granted the scope (403 insufficient_scope).
	ErrInsufficientScope = core.NewError(core.TypePermission, "insufficient_scope", "", "The installation was not granted the scope this endpoint needs.")
)

// Store sentinels: the outcomes a Store reports for the use cases to tell apart.
var (
	// ErrNotFound: no app or installation with that id (or token hash).
	ErrNotFound = errors.New("apps: not found")
	// ErrInstalled: the app already has an active installation on the merchant.
	ErrInstalled = errors.New("apps: already installed")
	// ErrUnknownMerchant: the merchant of a new installation does not exist.
	ErrUnknownMerchant = errors.New("apps: unknown merchant")
	// ErrCodeUsed: the authorization code was redeemed before.
	ErrCodeUsed = errors.New("apps: authorization code used")
)
