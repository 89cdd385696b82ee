package checkout

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Domain errors of checkout sessions (interface 7, D6). They match with errors.Is on type and
// code whatever the param or message.
var (
	// ErrSessionAlreadyCompleted: the session was paid; it can no longer be expired.
	ErrSessionAlreadyCompleted = core.NewError(core.TypeInvalidState, "session_already_completed", "",
		"This checkout session is already complete.")
	// ErrSessionExpired: the session is expired or canceled; its client_secret is no longer valid.
	ErrSessionExpired = core.NewError(core.TypeInvalidState, "session_expired", "",
		"This checkout session has expired or was canceled.")
	// ErrPriceInactive: a subscription session names an archived price.
	ErrPriceInactive = core.NewError(core.TypeInvalidRequest, "price_inactive", "",
		"The price is not active.")
	// ErrSubscriptionModeUnavailable: mode subscription is refused until subscriptions exist: such
	// a session would charge once and start no subscription.
	ErrSubscriptionModeUnavailable = core.NewError(core.TypeInvalidRequest, "mode_unsupported", "mode",
		"Subscription checkout is not available yet: this release cannot create subscriptions. Use mode 'payment' for a one-off payment.")
	// ErrPriceNotRecurring: a subscription session names a one-time price.
	ErrPriceNotRecurring = core.NewError(core.TypeInvalidRequest, "price_not_recurring", "",
		"A subscription checkout needs a recurring price.")
)

// Store sentinels: what a Store or a SessionRepository returns for a missing session and an
// unknown list cursor. They carry no type, code or param: the Service turns them into the
// documented errors (sessionNotFound, ListQuery.UnknownCursor; ErrSessionExpired for the
// buyer's unknown secret), so that an adapter never decides what the API answers.
var (
	// ErrNotFound: no session of the scope has that id (one of another merchant or
	// environment is not found either), or no session has that client secret hash.
	ErrNotFound = errors.New("checkout: session not found")
	// ErrUnknownCursor: a list cursor that names no session of the scope.
	ErrUnknownCursor = errors.New("checkout: the list cursor is not a session of the list")
)
