package openapi_test

import (
	"slices"
	"testing"

	"github.com/kassa-pay/kassa/openapi"
)

// An app sees one subscription shape: the App API's list of subscriptions and the
// customer.subscription.deleted app event carry the same fields, required alike, of the same
// types and formats.
func TestAppSubscriptionIsOneShape(t *testing.T) {
	app, err := openapi.LoadApp()
	if err != nil {
		t.Fatal(err)
	}
	events, err := openapi.LoadAppEvents()
	if err != nil {
		t.Fatal(err)
	}
	a := app.Components.Schemas["Subscription"].Value
	e := events.Components.Schemas["AppSubscription"].Value
	ar, er := slices.Sorted(slices.Values(a.Required)), slices.Sorted(slices.Values(e.Required))
	if !slices.Equal(ar, er) {
		t.Fatalf("required fields differ:\napp API: %v\napp event: %v", ar, er)
	}
	if len(a.Properties) != len(e.Properties) {
		t.Fatalf("the app API's subscription has %d fields, the app event's %d", len(a.Properties), len(e.Properties))
	}
	for name, ap := range a.Properties {
		ep, ok := e.Properties[name]
		if !ok {
			t.Errorf("%s: not in the app event's subscription", name)
			continue
		}
		av, ev := ap.Value, ep.Value
		if av.Type.Slice()[0] != ev.Type.Slice()[0] || av.Format != ev.Format || av.Nullable != ev.Nullable ||
			!slices.Equal(av.Enum, ev.Enum) {
			t.Errorf("%s: app API %v %q nullable=%v %v; app event %v %q nullable=%v %v", name,
				av.Type, av.Format, av.Nullable, av.Enum, ev.Type, ev.Format, ev.Nullable, ev.Enum)
		}
	}
}
