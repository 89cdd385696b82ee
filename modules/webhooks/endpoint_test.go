package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
)

var (
	t0       = time.Unix(1_800_000_000, 0).UTC()
	testScp  = core.Scope{MerchantID: "mer_1", Env: core.EnvTest}
	liveScp  = core.Scope{MerchantID: "mer_1", Env: core.EnvLive}
	anyEvent = []string{AllEvents}
)

func mustEndpoint(t *testing.T, scope core.Scope, p EndpointParams) *Endpoint {
	t.Helper()
	e, err := newEndpoint(scope, p, Destinations{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNewEndpointValidation(t *testing.T) {
	cases := []struct {
		name  string
		scope core.Scope
		p     EndpointParams
		code  string
		param string
	}{
		{"http in live", liveScp, EndpointParams{URL: "http://shop.example/hook", EnabledEvents: anyEvent}, "url_invalid", "url"},
		{"not a url", testScp, EndpointParams{URL: "shop.example/hook", EnabledEvents: anyEvent}, "url_invalid", "url"},
		{"ftp", testScp, EndpointParams{URL: "ftp://shop.example/", EnabledEvents: anyEvent}, "url_invalid", "url"},
		{"credentials", testScp, EndpointParams{URL: "https://u:p@shop.example/", EnabledEvents: anyEvent}, "url_invalid", "url"},
		{"no events", testScp, EndpointParams{URL: "https://shop.example/"}, core.CodeParameterMissing, "enabled_events"},
		{"unknown event", testScp, EndpointParams{URL: "https://shop.example/", EnabledEvents: []string{"invoice.paid", "payment_intent.succeeded"}}, "enabled_events_invalid", "enabled_events.1"},
		{"prefix wildcard is for apps", testScp, EndpointParams{URL: "https://shop.example/", EnabledEvents: []string{"checkout.*"}}, "enabled_events_invalid", "enabled_events.0"},
		{"loopback literal in test mode", testScp, EndpointParams{URL: "http://127.0.0.1:3000/hook", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"localhost in test mode", testScp, EndpointParams{URL: "http://localhost:3000/hook", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"localhost subdomain", testScp, EndpointParams{URL: "http://api.LOCALHOST./hook", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"ipv6 loopback", liveScp, EndpointParams{URL: "https://[::1]/hook", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"metadata v4", liveScp, EndpointParams{URL: "https://169.254.169.254/latest/meta-data/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"metadata v6", liveScp, EndpointParams{URL: "https://[fd00:ec2::254]/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"private", testScp, EndpointParams{URL: "http://10.0.0.7:8080/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"cgnat", testScp, EndpointParams{URL: "http://100.100.100.200/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"unspecified", testScp, EndpointParams{URL: "http://0.0.0.0:8080/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"multicast", testScp, EndpointParams{URL: "http://[ff02::1]/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"mapped loopback", testScp, EndpointParams{URL: "http://[::ffff:127.0.0.1]/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"nat64 loopback", testScp, EndpointParams{URL: "http://[64:ff9b::7f00:1]/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"decimal loopback", testScp, EndpointParams{URL: "http://2130706433/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"hex loopback", testScp, EndpointParams{URL: "http://0x7f.1/", EnabledEvents: anyEvent}, CodeURLNotPublic, "url"},
		{"long description", testScp, EndpointParams{URL: "https://shop.example/", EnabledEvents: anyEvent, Description: strings.Repeat("x", MaxDescriptionLen+1)}, "description_invalid", "description"},
	}
	for _, c := range cases {
		_, err := newEndpoint(c.scope, c.p, Destinations{}, t0)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Type != core.TypeInvalidRequest || ce.Code != c.code || ce.Param != c.param {
			t.Errorf("%s: got %v, want %s at %s", c.name, err, c.code, c.param)
		}
	}
	e := mustEndpoint(t, testScp, EndpointParams{URL: "http://shop.example:3000/hook", EnabledEvents: []string{"invoice.paid", "invoice.paid", "charge.refunded"}})
	if !core.HasIDShape(e.ID(), PrefixEndpoint) || !strings.HasPrefix(e.Secret(), PrefixSecret) ||
		len(e.Secret()) < len(PrefixSecret)+32 || e.Status() != StatusEnabled {
		t.Fatalf("endpoint %+v", e.Snapshot())
	}
	if got := e.EnabledEvents(); !slices.Equal(got, []string{"invoice.paid", "charge.refunded"}) {
		t.Errorf("events not deduplicated: %v", got)
	}
	mustEndpoint(t, liveScp, EndpointParams{URL: "https://shop.example/hook", EnabledEvents: anyEvent})
	mustEndpoint(t, liveScp, EndpointParams{URL: "https://93.184.216.34/hook", EnabledEvents: anyEvent})
	mustEndpoint(t, liveScp, EndpointParams{URL: "https://[2606:4700:4700::1111]/hook", EnabledEvents: anyEvent})
	mustEndpoint(t, testScp, EndpointParams{URL: "http://123.example/hook", EnabledEvents: anyEvent})
}

// The development flag lifts the address rule: a local receiver on loopback, in either mode.
func TestDestinationsAllowPrivate(t *testing.T) {
	dev := Destinations{AllowPrivate: true}
	for _, u := range []string{"http://127.0.0.1:4000/", "http://localhost:4000/", "http://10.0.0.7/"} {
		if _, err := newEndpoint(testScp, EndpointParams{URL: u, EnabledEvents: anyEvent}, dev, t0); err != nil {
			t.Errorf("%s with the development flag: %v", u, err)
		}
	}
	svc := mustService(t, newFakeStore())
	e, _, err := svc.CreateEndpoint(context.Background(), testScp, EndpointParams{URL: "https://shop.example/", EnabledEvents: anyEvent})
	if err != nil {
		t.Fatal(err)
	}
	loop := "http://127.0.0.1:4000/"
	if _, err := svc.ChangeEndpoint(context.Background(), testScp, e.ID(), EndpointChanges{URL: &loop}); !errors.Is(err, core.NewError(core.TypeInvalidRequest, CodeURLNotPublic, "", "")) {
		t.Errorf("update to loopback: %v", err)
	}
	dst := newFakeStore()
	svc, err = NewService(dst, core.FixedClock{T: t0}, dev)
	if err != nil {
		t.Fatal(err)
	}
	if e, _, err = svc.CreateEndpoint(context.Background(), testScp, EndpointParams{URL: "https://shop.example/", EnabledEvents: anyEvent}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ChangeEndpoint(context.Background(), testScp, e.ID(), EndpointChanges{URL: &loop}); err != nil {
		t.Errorf("update to loopback with the development flag: %v", err)
	}
}

func TestPublicAddress(t *testing.T) {
	for s, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700:4700::1111": true, "93.184.216.34": true,
		"127.0.0.1": false, "127.8.9.10": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fd00::1": false, "fd00:ec2::254": false, "0.0.0.0": false, "::": false,
		"100.64.0.1": false, "100.100.100.200": false, "192.0.0.192": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false,
		"224.0.0.1": false, "ff02::1": false, "255.255.255.255": false, "64:ff9b::a00:1": false, "64:ff9b::808:808": true,
		"2002:7f00:1::": false, "2002:808:808::": true, "::7f00:1": false,
	} {
		if got := PublicAddress(netip.MustParseAddr(s)); got != want {
			t.Errorf("PublicAddress(%s) = %v", s, got)
		}
	}
}

func TestSubscribes(t *testing.T) {
	all := mustEndpoint(t, testScp, EndpointParams{URL: "https://a.example/", EnabledEvents: anyEvent})
	some := mustEndpoint(t, testScp, EndpointParams{URL: "https://a.example/", EnabledEvents: []string{"invoice.paid"}})
	for _, ev := range MerchantEvents {
		if !all.Subscribes(ev) {
			t.Errorf("* misses %s", ev)
		}
	}
	if !some.Subscribes("invoice.paid") || some.Subscribes("invoice.voided") {
		t.Error("exact subscription")
	}
	// App-only events never reach merchant endpoints, even under *.
	for _, ev := range []string{"payment_intent.succeeded", "checkout.session.canceled", "checkout.session.refunded"} {
		if all.Subscribes(ev) {
			t.Errorf("* delivers app-only %s", ev)
		}
	}
}

func TestRotation(t *testing.T) {
	e := mustEndpoint(t, testScp, EndpointParams{URL: "https://a.example/", EnabledEvents: anyEvent})
	first := e.Secret()
	if got := e.ActiveSecrets(t0); !slices.Equal(got, []string{first}) {
		t.Fatalf("before rotation: %v", got)
	}
	second := e.RotateSecret(t0)
	if second == first || e.Secret() != second {
		t.Fatal("rotation kept the secret")
	}
	if got := e.ActiveSecrets(t0.Add(SecretOverlap - time.Second)); !slices.Equal(got, []string{second, first}) {
		t.Errorf("during overlap: %v", got)
	}
	if got := e.ActiveSecrets(t0.Add(SecretOverlap)); !slices.Equal(got, []string{second}) {
		t.Errorf("after overlap: %v", got)
	}
	third := e.RotateSecret(t0.Add(time.Hour))
	if got := e.ActiveSecrets(t0.Add(2 * time.Hour)); !slices.Equal(got, []string{third, second}) {
		t.Errorf("second rotation keeps at most two: %v", got)
	}
	// Survives a round trip through storage.
	if got := RehydrateEndpoint(e.Snapshot()).ActiveSecrets(t0.Add(2 * time.Hour)); !slices.Equal(got, []string{third, second}) {
		t.Errorf("after rehydration: %v", got)
	}
}

func TestDisableRules(t *testing.T) {
	fail := Outcome{StatusCode: 500}
	ok := Outcome{StatusCode: 200}

	e := mustEndpoint(t, testScp, EndpointParams{URL: "https://a.example/", EnabledEvents: anyEvent})
	if !e.RecordOutcome(Outcome{StatusCode: 410}, t0) {
		t.Fatal("410 did not report disabling")
	}
	if e.Enabled() || e.DisabledReason() != DisabledGone {
		t.Fatalf("410: %s %s", e.Status(), e.DisabledReason())
	}
	e.Enable()
	if !e.Enabled() || e.DisabledReason() != "" || e.FailingSince() != nil {
		t.Fatal("enable")
	}

	// Five days of uninterrupted failure disable; a success in between resets the run.
	if e.RecordOutcome(fail, t0) || e.RecordOutcome(fail, t0.Add(4*24*time.Hour)) {
		t.Fatal("disabled too early")
	}
	e.RecordOutcome(ok, t0.Add(4*24*time.Hour+time.Hour))
	if e.FailingSince() != nil {
		t.Fatal("success did not end the run")
	}
	start := t0.Add(5 * 24 * time.Hour)
	e.RecordOutcome(fail, start)
	if e.RecordOutcome(fail, start.Add(FailureWindow-time.Second)) || !e.Enabled() {
		t.Fatal("disabled before five days")
	}
	if !e.RecordOutcome(fail, start.Add(FailureWindow)) || e.Enabled() || e.DisabledReason() != DisabledFailing {
		t.Fatalf("five days: %s %s", e.Status(), e.DisabledReason())
	}

	// A merchant's disable keeps its reason; 410 later does not overwrite it.
	m := mustEndpoint(t, testScp, EndpointParams{URL: "https://a.example/", EnabledEvents: anyEvent})
	m.Disable(DisabledByMerchant)
	if m.RecordOutcome(Outcome{StatusCode: 410}, t0) || m.DisabledReason() != DisabledByMerchant {
		t.Fatal("reason overwritten")
	}
}

// mustService is the service over st, on the fixed clock t0, with the production rule for
// destinations.
func mustService(t *testing.T, st Store) *Service {
	t.Helper()
	svc, err := NewService(st, core.FixedClock{T: t0}, Destinations{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// A service and a worker refuse to be built without their dependencies.
func TestConstructorsCheckDependencies(t *testing.T) {
	st := newFakeStore()
	if _, err := NewService(nil, core.FixedClock{T: t0}, Destinations{}); err == nil {
		t.Error("service without a store")
	}
	if _, err := NewService(st, nil, Destinations{}); err == nil {
		t.Error("service without a clock")
	}
	render := func(core.EventRecord, core.Channel) (json.RawMessage, error) { return nil, nil }
	for name, build := range map[string]func() (*Worker, error){
		"store": func() (*Worker, error) {
			return NewWorker(nil, nopSender{}, render, core.FixedClock{T: t0}, WorkerOptions{})
		},
		"sender": func() (*Worker, error) { return NewWorker(st, nil, render, core.FixedClock{T: t0}, WorkerOptions{}) },
		"render": func() (*Worker, error) {
			return NewWorker(st, nopSender{}, nil, core.FixedClock{T: t0}, WorkerOptions{})
		},
		"clock": func() (*Worker, error) { return NewWorker(st, nopSender{}, render, nil, WorkerOptions{}) },
	} {
		if _, err := build(); err == nil {
			t.Errorf("worker without a %s", name)
		}
	}
}

type nopSender struct{}

func (nopSender) Send(context.Context, Message) Outcome { return Outcome{StatusCode: 200} }

func TestServiceUseCases(t *testing.T) {
	ctx := context.Background()
	svc := mustService(t, newFakeStore())
	e, secret, err := svc.CreateEndpoint(ctx, testScp, EndpointParams{URL: "https://a.example/", EnabledEvents: anyEvent})
	if err != nil || secret != e.Secret() {
		t.Fatal(err)
	}
	_, rotated, err := svc.RotateSecret(ctx, testScp, e.ID())
	if err != nil || rotated == secret {
		t.Fatal("rotate", err)
	}
	got, _ := svc.GetEndpoint(ctx, testScp, e.ID())
	if !slices.Equal(got.ActiveSecrets(t0), []string{rotated, secret}) {
		t.Fatal("rotation not stored")
	}
	if d, _ := svc.DisableEndpoint(ctx, testScp, e.ID()); d.Enabled() || d.DisabledReason() != DisabledByMerchant {
		t.Fatal("disable")
	}
	if d, _ := svc.EnableEndpoint(ctx, testScp, e.ID()); !d.Enabled() {
		t.Fatal("enable")
	}
	if _, err := svc.GetEndpoint(ctx, liveScp, e.ID()); !errors.Is(err, core.NotFound("webhook_endpoint", "", "")) {
		t.Fatalf("other environment: %v", err)
	}
	if _, err := svc.GetEndpoint(ctx, testScp, "nope"); !errors.Is(err, core.NotFound("webhook_endpoint", "", "")) {
		t.Fatalf("bad id: %v", err)
	}
}

func TestEnvelope(t *testing.T) {
	b, err := Envelope(OutboxEvent{ID: "evt_1", Type: "invoice.paid", Scope: testScp, Created: t0}, []byte(`{"id":"in_1"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"evt_1","object":"event","type":"invoice.paid","environment":"test","api_version":"2026-11-01","created":1800000000,"data":{"object":{"id":"in_1"}}}`
	if string(b) != want {
		t.Fatalf("envelope\n%s\nwant\n%s", b, want)
	}
}

// An endpoint whose stored secret could not be opened (missing or wrong sealing key) is
// refused a test event with webhook_secret_unavailable; rotating gives it a new secret with no
// overlap, which ends the condition.
func TestSecretUnavailable(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	svc := mustService(t, st)
	e, _, err := svc.CreateEndpoint(ctx, testScp, EndpointParams{URL: "https://shop.example/", EnabledEvents: anyEvent})
	if err != nil {
		t.Fatal(err)
	}
	sn := e.Snapshot()
	sn.Secret, sn.SecretUnavailable = "", true
	st.endpoints[scopeKey(testScp)+e.ID()].snap = sn // as a store reads it without the sealing key
	if _, err := svc.SendTestEvent(ctx, testScp, e.ID()); !errors.Is(err, ErrSecretUnavailable) {
		t.Fatalf("test event with an unavailable secret: %v", err)
	}
	got, secret, err := svc.RotateSecret(ctx, testScp, e.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.SecretUnavailable() || !strings.HasPrefix(secret, PrefixSecret) || got.PreviousSecretExpiresAt(t0) != nil ||
		!slices.Equal(got.ActiveSecrets(t0), []string{secret}) {
		t.Fatalf("after rotation: %+v", got.Snapshot())
	}
	if _, err := svc.SendTestEvent(ctx, testScp, e.ID()); err != nil {
		t.Fatalf("test event after rotation: %v", err)
	}
}
