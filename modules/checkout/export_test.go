package checkout

import "github.com/kassa-pay/kassa/ports"

// NewFakeStore is the in-memory fake and its unit of work for the contract suite, which runs
// in package checkout_test (checkouttest imports checkout).
func NewFakeStore() (Store, ports.UnitOfWorkOf[Tx]) {
	m := newMemStore()
	return m, memUoW{m}
}
