package identity_test

import (
	"testing"

	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/identity/identitytest"
)

// TestFakeStoreContract: the rule tests' fake behaves as the postgres store does
// (adapters/postgres runs the same suite).
func TestFakeStoreContract(t *testing.T) {
	identitytest.RunStore(t, func(*testing.T) identity.Store { return identity.NewFakeStore() })
}
