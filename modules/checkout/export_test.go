package checkout

import "github.com/kassa-pay/kassa/ports"

// NewFakeStore is the in-memory fake and its unit of work for the contract suite, which runs
// in package checkout_test (checkouttest imports checkout); every merchant is merchant.
func NewFakeStore(merchant BuyerMerchant) (Store, ports.UnitOfWorkOf[Tx]) {
	m := newMemStore()
	m.anyMerchant = merchant
	return m, memUoW{m}
}
