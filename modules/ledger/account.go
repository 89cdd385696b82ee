package ledger

import (
	"fmt"

	"github.com/kassa-pay/kassa/core"
)

// Account is one account of a merchant environment's ledger in one currency.
type Account string

const (
	// World is everything outside Kassa: customers, card networks, banks. It is the source of
	// a payment's amount and the destination of a refund or a dispute; it may go negative.
	World Account = "world"
	// Pending is the merchant's balance not yet available (D7: card funds for two days).
	Pending Account = "pending"
	// Available is the merchant's balance a payout can take. It may go negative (a refund or a
	// dispute larger than what is available); later payments bring it back.
	Available Account = "available"
	// Fees is what Kassa keeps: service fees and dispute fees, less what was reversed.
	Fees Account = "fees"
	// Payouts is money on its way to the merchant's bank (a payout created, not yet paid).
	Payouts Account = "payouts"
)

// Accounts lists every account, in lock order (sorted by name).
var Accounts = []Account{Available, Fees, Payouts, Pending, World}

// MayGoNegative reports whether a balance of a may be below zero.
func (a Account) MayGoNegative() bool { return a == World || a == Available }

// Valid reports whether a is one of Accounts.
func (a Account) Valid() bool {
	switch a {
	case World, Pending, Available, Fees, Payouts:
		return true
	}
	return false
}

// Posting moves Amount (> 0, minor units of Currency) from Source to Destination.
type Posting struct {
	Source, Destination Account
	Amount              int64
	Currency            core.Currency
}

// BalanceKey names one balance row: an account of a scope in a currency.
type BalanceKey struct {
	Scope    core.Scope
	Currency core.Currency
	Account  Account
}

// Less orders balance keys: the lock order (merchant, environment, currency, account).
func (k BalanceKey) Less(o BalanceKey) bool {
	if k.Scope.MerchantID != o.Scope.MerchantID {
		return k.Scope.MerchantID < o.Scope.MerchantID
	}
	if k.Scope.Env != o.Scope.Env {
		return k.Scope.Env < o.Scope.Env
	}
	if k.Currency != o.Currency {
		return k.Currency < o.Currency
	}
	return k.Account < o.Account
}

func (k BalanceKey) String() string {
	return fmt.Sprintf("%s/%s/%s/%s", k.Scope.MerchantID, k.Scope.Env, k.Currency, k.Account)
}
