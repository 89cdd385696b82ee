package apps

import (
	"slices"
	"strings"
)

// The App API scopes. Each lets an installation read one kind of the merchant's data.
const (
	ScopeMerchantRead      = "merchant:read"
	ScopePaymentsRead      = "payments:read"
	ScopeRefundsRead       = "refunds:read"
	ScopeDisputesRead      = "disputes:read"
	ScopePayoutsRead       = "payouts:read"
	ScopeProductsRead      = "products:read"
	ScopeInvoicesRead      = "invoices:read"
	ScopeSubscriptionsRead = "subscriptions:read"
	ScopeAnalyticsRead     = "analytics:read"
)

// Scopes lists every scope, in the order the interface lists the endpoints that need them.
var Scopes = []string{
	ScopeMerchantRead, ScopePaymentsRead, ScopeRefundsRead, ScopeDisputesRead, ScopePayoutsRead,
	ScopeProductsRead, ScopeInvoicesRead, ScopeSubscriptionsRead, ScopeAnalyticsRead,
}

// scopeWords says what each scope lets the app do, in the merchant's words (the consent
// page and the dashboard's list of installed apps).
var scopeWords = map[string]string{
	ScopeMerchantRead:      "See your business profile: company name, country and contact e-mail",
	ScopePaymentsRead:      "See your payments, including the buyer's name and e-mail address",
	ScopeRefundsRead:       "See your refunds",
	ScopeDisputesRead:      "See your chargebacks and their deadlines",
	ScopePayoutsRead:       "See your payouts to your bank account and your balance",
	ScopeProductsRead:      "See your product catalog",
	ScopeInvoicesRead:      "See the invoices you issued",
	ScopeSubscriptionsRead: "See your subscriptions and when they renew",
	ScopeAnalyticsRead:     "See your sales figures: volume, refunds and fees per currency",
}

// ScopeWords says in plain words what scope lets an app do.
func ScopeWords(scope string) string { return scopeWords[scope] }

// restrictedScopes are granted only to apps the operator has reviewed.
var restrictedScopes = []string{ScopePayoutsRead}

// checkScopes validates a requested scope list for the request field param: at least one,
// each known, no duplicates, and a restricted one only for a reviewed app. It returns the list
// in the canonical order of Scopes.
func checkScopes(param string, in []string, reviewed bool) ([]string, error) {
	if len(in) == 0 {
		return nil, ErrScopesMissing.At(param)
	}
	seen := map[string]bool{}
	for _, s := range in {
		if !slices.Contains(Scopes, s) {
			return nil, ErrScopeUnknown.At(param).Msg("Unknown scope %q. Scopes are %s.", s, strings.Join(Scopes, ", "))
		}
		if seen[s] {
			return nil, ErrScopeDuplicate.At(param).Msg("Scope %q is listed twice.", s)
		}
		seen[s] = true
		if !reviewed && slices.Contains(restrictedScopes, s) {
			return nil, ErrScopeRequiresReview.At(param).Msg("Scope %q is granted only to apps the operator has reviewed.", s)
		}
	}
	out := make([]string, 0, len(in))
	for _, s := range Scopes {
		if seen[s] {
			out = append(out, s)
		}
	}
	return out, nil
}
