// Package payments holds the Payment aggregate (interface 2.2) with its state machine (D9),
// the fee plans and the fee computation (D7), and the names of the payment events (D10).
// It is pure: it needs only core, ports (FX rates) and the standard library. Storage, HTTP and
// the processor are wired around it elsewhere.
package payments
