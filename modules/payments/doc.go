// Package payments holds the Payment aggregate (interface 2.2) with its state machine (D9),
// the fee plans and the fee computation (D7), the names of the payment events (D10), the
// charge protocol every kind of payable is paid through (Charger), and refunds (the Refund
// aggregate, FeeReversal and the Refunder, which records a refund, asks the processor and
// applies it once; D16). It needs only core, ports and the standard library. Storage, HTTP and
// the processor are wired around it elsewhere.
package payments
