// Package payouts runs the daily payouts (D16): at 00:00 UTC of each environment's clock, one
// payout (po_…) per currency whose available balance is positive, for all of it, arriving two
// days later. Each payout settles the balance transactions it pays out (their nets sum to its
// amount). A payout is recorded (and posted to the ledger) in one unit of work, sent through
// the environment's PayoutRail with no transaction open (its id is the rail's idempotency key,
// so a send repeated after a crash is the same transfer), and marked paid on its arrival date.
// An environment without a rail (live, until a live adapter exists) gets no payouts.
package payouts
