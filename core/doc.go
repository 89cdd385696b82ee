// Package core is Kassa's shared kernel: identifiers, money and currencies, environments,
// domain errors, clocks and the event envelope. It uses the standard library only and does
// no I/O, so every other package may depend on it.
package core
