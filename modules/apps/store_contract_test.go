package apps_test

import (
	"testing"

	"github.com/kassa-pay/kassa/modules/apps"
	"github.com/kassa-pay/kassa/modules/apps/appstest"
)

func TestFakeStoreContract(t *testing.T) {
	appstest.RunStore(t, func(t *testing.T) appstest.Harness {
		s, newMerchant := apps.NewFakeStore()
		return appstest.Harness{Store: s, NewMerchant: func(*testing.T) string { return newMerchant() }}
	})
}
