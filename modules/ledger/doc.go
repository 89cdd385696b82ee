// Package ledger is the merchant's balance: an append-only, double-entry ledger per merchant,
// environment and currency (D7, D16).
//
// Every money movement is a balance transaction (txn_…): a payment, a fee, a refund, a fee
// reversal, a dispute, a dispute fee, a dispute reversal or a payout, with its amount, fee,
// net (amount − fee), the day its funds are available (available_on) and the object it comes
// from (py_, re_, dp_, po_). A transaction is written as postings between accounts (the model
// of formance ledger): its amount moves between the outside world (or, for a payout, the
// payouts in transit) and the merchant's pending or available balance, its fee between that
// balance and Kassa's fees. Every posting has a source and a destination, so every currency's
// accounts sum to zero, always. Nothing is ever updated or deleted: a correction is a new
// transaction, and funds becoming available are a release posting (pending → available) made
// by the release sweep (Releaser) when available_on comes, on the scope's clock.
//
// Balances are rows per (merchant, environment, currency, account), changed once per unit of
// work by the net of its postings, locked in sorted order and checked on the spot: an account
// that may not go negative (pending, fees, payouts in transit) refuses with
// ErrBalanceNegative; the available balance may go negative (a refund or a dispute larger than
// what is available), and a payout takes only a positive available balance. Reading a balance
// reads those rows: its cost depends on the number of currencies, never on the history.
//
// Payments post through it inside their own units of work (PostPayment, PostRefund); the
// dispute functions (PostDispute, PostDisputeReversal) are for the dispute lifecycle.
package ledger
