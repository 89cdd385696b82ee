package checkout

import (
	"context"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// BuyerMerchant is what the buyer's side needs to know of the merchant behind a session.
type BuyerMerchant struct {
	Name string
	// Onboarded is false while the operator has not completed the merchant's onboarding:
	// live charges are then refused with 409 merchant_not_ready (D1).
	Onboarded bool
}

// MerchantNames reads the merchant of a session for its buyer (CancelByBuyer's answer; the
// other buyer use cases get it from Store.FindByClientSecretHash, with the session). The
// wiring adapts the identity module to it, so that checkout does not depend on identity.
type MerchantNames interface {
	BuyerMerchant(ctx context.Context, merchantID string) (BuyerMerchant, error)
}

// Errors of the buyer use cases (besides ErrSessionExpired and *DeclineError).
var (
	// ErrProcessorUnavailable: no processor can charge in the session's environment (live,
	// while no live processor adapter is configured). 503 api_error; retrying later is fine
	// and nothing was charged.
	ErrProcessorUnavailable = core.NewError(core.TypeAPI, "processor_unavailable", "",
		"Live payments need a live processor adapter, and this Kassa server has none configured (it ships only the sandbox processor); nothing was charged.")
	// ErrConfirmLimit: the card-testing guard (MaxDeclines declined charges on this session).
	ErrConfirmLimit = core.NewError(core.TypeInvalidState, "session_confirm_limit", "",
		"Too many declined payment attempts on this checkout session; start a new checkout.")
	// ErrNoPendingAction: ResolveAction on a session with no charge waiting for the buyer.
	ErrNoPendingAction = core.NewError(core.TypeInvalidState, "no_action_pending", "",
		"No payment of this checkout session is waiting for authentication.")
)

// processorFor returns the processor of the session's environment, or the documented refusal
// (m is the session's merchant, read with the session).
func (svc *Service) processorFor(scope core.Scope, m BuyerMerchant) (ports.Processor, error) {
	if p, ok := svc.charger.Processor(scope.Env); ok {
		return p, nil
	}
	if scope.Env == core.EnvLive && !m.Onboarded {
		return nil, core.ErrMerchantNotReady
	}
	return nil, ErrProcessorUnavailable
}
