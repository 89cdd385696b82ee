package checkout

import "github.com/kassa-pay/kassa/core"

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
	// ErrPriceNotRecurring: a subscription session names a one-time price.
	ErrPriceNotRecurring = core.NewError(core.TypeInvalidRequest, "price_not_recurring", "",
		"A subscription checkout needs a recurring price.")
)
