package checkout

import (
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// The buyer's side of a session: what the hosted pages and the browser API (checkout origin)
// may see and do, authorised only by the session's client_secret (interface 5.2, D6). The
// use cases (BuyerView, Confirm, ResolveAction, CancelByBuyer) answer ErrSessionExpired for an
// unknown id, a wrong secret, and a session that is no longer open, so a caller learns nothing
// about sessions whose secret it does not hold.

// BuyerView is the public view of an open session: what the hosted page shows. It carries
// nothing of other sessions and no merchant secret.
type BuyerView struct {
	Session      *Session
	MerchantName string
	// Pending is set when a charge of the session waits for the buyer (3-D Secure).
	Pending *PendingAction
	// Recurring is the price's terms of a subscription-mode session; nil otherwise.
	Recurring *RecurringTerms
}

// RecurringTerms is what a subscription-mode session's buyer agrees to: the price's amount
// (the session's amount) every IntervalCount Intervals, after TrialDays free days (0: none).
type RecurringTerms struct {
	Interval      string // day, week, month or year
	IntervalCount int
	TrialDays     int
}

// PendingAction is a charge that waits for the buyer before it can go on.
type PendingAction struct {
	Kind string // ports.ActionThreeDSecure
	// RedirectURL is a live issuer's challenge page; empty in the sandbox, where the hosted
	// page shows Kassa's own simulated challenge ("Complete" / "Fail").
	RedirectURL string
}

// ConfirmInput is what the buyer typed: exactly one of Card (Method card) and SEPA (Method
// sepa_debit). It lives only for the Confirm call; card numbers and IBANs are never stored or
// logged (ports.CardDetails redacts itself).
type ConfirmInput struct {
	Method ports.PaymentMethodKind
	Card   *ports.CardDetails
	SEPA   *ports.SEPADetails
}

// ConfirmStatus is where a confirmation left the payment.
type ConfirmStatus string

const (
	// ConfirmSucceeded: the session is complete with a succeeded payment.
	ConfirmSucceeded ConfirmStatus = "succeeded"
	// ConfirmProcessing: a delayed method (SEPA); the session is complete, the payment
	// processing, and the buyer goes to success_url.
	ConfirmProcessing ConfirmStatus = "processing"
	// ConfirmRequiresAction: 3-D Secure; the session stays open until ResolveAction.
	ConfirmRequiresAction ConfirmStatus = "requires_action"
)

// ConfirmResult is the answer of Confirm and ResolveAction. A decline is not a result but a
// *DeclineError; the session then stays open for another try.
type ConfirmResult struct {
	Status  ConfirmStatus
	Session *Session       // after the change (complete, or open with Action pending)
	Action  *PendingAction // ConfirmRequiresAction only
	// Merchant is the session's merchant as the buyer sees it, read with the session before
	// the charge (for rendering the answer without reading it again).
	Merchant BuyerMerchant
}

// CodeCardDeclined is the code of every decline (402 card_error, D6); DeclineCode says why.
const CodeCardDeclined = "card_declined"

// DeclineError is a refused charge: 402 card_error / card_declined with its decline_code
// (ports.Decline*). Message is fit for the buyer and never contains the number.
type DeclineError struct {
	DeclineCode string
	Message     string
	Param       string // the input the decline is about, when one is (e.g. "card.cvc")
}

func (e *DeclineError) Error() string {
	return string(core.TypeCard) + "/" + CodeCardDeclined + " (" + e.DeclineCode + "): " + e.Message
}

// CoreError is the envelope form of the decline (type, code, param, message); the decline_code
// travels beside it.
func (e *DeclineError) CoreError() *core.Error {
	return core.NewError(core.TypeCard, CodeCardDeclined, e.Param, e.Message)
}
