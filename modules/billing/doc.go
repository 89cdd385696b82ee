// Package billing is recurring billing: customers (cus_…, found or created by e-mail within a
// merchant environment) and the payment methods saved for them (pm_…), which later charges
// take off-session. A saved method is an opaque processor reference plus only what may be
// stored of it (type, brand, last four, country, funding, expiry), never a number. Saving one
// without moving money is a processor operation (ports.MethodSaver): the sandbox in test mode,
// a live processor's adapter (SetupIntents on the merchant's connected account) in live mode,
// with no change here.
//
// Subscriptions, renewals and dunning build on these (interface sections 2.3, 3.4, 4.2).
package billing
