package apps

import "github.com/kassa-pay/kassa/core"

// NewFakeStore exposes the fake to the contract suite (package apps_test); addMerchant makes a
// merchant it knows.
func NewFakeStore() (Store, func() string) {
	f := newFakeStore()
	return f, func() string {
		id := core.NewID(core.PrefixMerchant)
		f.addMerchant(id)
		return id
	}
}
