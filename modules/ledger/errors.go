package ledger

import (
	"errors"

	"github.com/kassa-pay/kassa/core"
)

// Domain errors of the ledger.
var (
	// ErrBalanceNegative: a unit of work would leave an account below zero that may not go
	// there (pending, fees, payouts in transit). Nothing is written; the balance is never
	// clamped.
	ErrBalanceNegative = core.NewError(core.TypeInvalidState, "balance_insufficient", "",
		"This movement would take a balance below zero.")
	// ErrTransactionNotFound: no balance transaction with that id in the scope.
	ErrTransactionNotFound = core.NewError(core.TypeNotFound, "balance_transaction_not_found", "id",
		"No such balance transaction.")
	// ErrTypeInvalid: a type filter that names no balance transaction type.
	ErrTypeInvalid = core.NewError(core.TypeInvalidRequest, "type_invalid", "type",
		"type must be payment, fee, refund, fee_reversal, dispute, dispute_fee, dispute_reversal or payout.")
)

// Store sentinels.
var (
	// ErrNotFound: no such balance transaction in the scope.
	ErrNotFound = errors.New("ledger: no such balance transaction")
	// ErrUnknownCursor: a list cursor that is not a balance transaction of the scope.
	ErrUnknownCursor = errors.New("ledger: the cursor is not a balance transaction of this list")
	// ErrTransactionExists: a balance transaction for the same source and type was posted
	// already (a movement posts once).
	ErrTransactionExists = errors.New("ledger: this movement was posted already")
)
