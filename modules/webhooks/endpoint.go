package webhooks

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// Identifier and secret prefixes (D2).
const (
	PrefixEndpoint = "we_"
	PrefixSecret   = "whsec_"
	// PrefixDelivery names one event × endpoint delivery. D2 does not list it; deliveries are
	// exposed by the dashboard API only (the delivery log and redelivery).
	PrefixDelivery = "wd_"
)

// Limits of an endpoint.
const (
	MaxEndpoints      = 16  // per merchant environment
	MaxDescriptionLen = 500 // characters
	// SecretOverlap is how long the previous secret keeps signing after a rotation (D10).
	SecretOverlap = 24 * time.Hour
)

// Status of an endpoint.
type Status string

const (
	StatusEnabled  Status = "enabled"
	StatusDisabled Status = "disabled"
)

// DisabledReason says why an endpoint is disabled.
type DisabledReason string

const (
	DisabledByMerchant DisabledReason = "disabled_by_merchant"
	DisabledGone       DisabledReason = "endpoint_gone"    // it answered 410 Gone
	DisabledFailing    DisabledReason = "failing_too_long" // FailureWindow of uninterrupted failure
)

// Secret is one signing secret: the whole `whsec_…` string is the HMAC key. ExpiresAt is nil
// for the current secret and set for the previous one during the overlap after a rotation.
//
// Secrets are held in clear here because every delivery needs them as HMAC keys, so they cannot
// be kept as a hash as API keys are. The store seals them at rest (adapters/signing.Box:
// AES-256-GCM under KASSA_WEBHOOK_SECRET_KEY, bound to the endpoint id) and no presenter may
// render them: a secret is returned once, by CreateEndpoint and RotateSecret.
type Secret struct {
	Value     string
	ExpiresAt *time.Time
}

// Endpoint is the webhook endpoint aggregate. Its fields are unexported; it is built by
// newEndpoint (after validation) or rebuilt by RehydrateEndpoint, and changes only through its
// methods.
type Endpoint struct {
	id             string
	scope          core.Scope
	url            string
	enabledEvents  []string
	description    string
	status         Status
	disabledReason DisabledReason
	current        string
	previous       *Secret
	failingSince   *time.Time
	created        time.Time
	// secretUnavailable: the stored secrets could not be opened (the server's sealing key is
	// missing or wrong); current and previous are empty and nothing can be signed.
	secretUnavailable bool
	// An app endpoint's copy for one merchant environment (app_endpoint.go): the app, the
	// installation it delivers for and the scopes that installation was granted. Empty for a
	// merchant endpoint.
	appID, installation string
	installationScopes  []string
}

// EndpointSnapshot is the full state of an endpoint as storage keeps it.
type EndpointSnapshot struct {
	ID             string
	Scope          core.Scope
	URL            string
	EnabledEvents  []string
	Description    string
	Status         Status
	DisabledReason DisabledReason // empty when enabled
	Secret         string         // the current secret
	Previous       *Secret        // the previous secret while it overlaps, else nil
	FailingSince   *time.Time     // start of the current run of failed attempts, else nil
	Created        time.Time
	// SecretUnavailable says the stored secrets could not be opened (the sealing key is
	// missing or wrong): Secret and Previous are empty, and storage keeps the stored forms
	// as they are until the secret is rotated.
	SecretUnavailable bool
	// AppID and Installation are set on an app endpoint's copy for one merchant environment
	// (app_endpoint.go), InstallationScopes when the fan-out reads it; empty for a merchant
	// endpoint.
	AppID, Installation string
	InstallationScopes  []string
}

// RehydrateEndpoint rebuilds an endpoint from storage without re-validating it.
func RehydrateEndpoint(s EndpointSnapshot) *Endpoint {
	return &Endpoint{
		id: s.ID, scope: s.Scope, url: s.URL, enabledEvents: slices.Clone(s.EnabledEvents),
		description: s.Description, status: s.Status, disabledReason: s.DisabledReason,
		current: s.Secret, previous: s.Previous, failingSince: s.FailingSince, created: s.Created,
		secretUnavailable: s.SecretUnavailable,
		appID:             s.AppID, installation: s.Installation, installationScopes: slices.Clone(s.InstallationScopes),
	}
}

// Snapshot returns the endpoint's full state for storage.
func (e *Endpoint) Snapshot() EndpointSnapshot {
	return EndpointSnapshot{
		ID: e.id, Scope: e.scope, URL: e.url, EnabledEvents: slices.Clone(e.enabledEvents),
		Description: e.description, Status: e.status, DisabledReason: e.disabledReason,
		Secret: e.current, Previous: e.previous, FailingSince: e.failingSince, Created: e.created,
		SecretUnavailable: e.secretUnavailable,
		AppID:             e.appID, Installation: e.installation, InstallationScopes: slices.Clone(e.installationScopes),
	}
}

// Installation is the installation an app endpoint's copy delivers for; empty for a merchant
// endpoint.
func (e *Endpoint) Installation() string { return e.installation }

func (e *Endpoint) ID() string                     { return e.id }
func (e *Endpoint) Scope() core.Scope              { return e.scope }
func (e *Endpoint) URL() string                    { return e.url }
func (e *Endpoint) EnabledEvents() []string        { return slices.Clone(e.enabledEvents) }
func (e *Endpoint) Description() string            { return e.description }
func (e *Endpoint) Status() Status                 { return e.status }
func (e *Endpoint) DisabledReason() DisabledReason { return e.disabledReason }
func (e *Endpoint) Created() time.Time             { return e.created }
func (e *Endpoint) FailingSince() *time.Time       { return e.failingSince }
func (e *Endpoint) Enabled() bool                  { return e.status == StatusEnabled }

// SecretUnavailable reports that the endpoint's signing secret could not be opened (the
// server's KASSA_WEBHOOK_SECRET_KEY is missing or is not the key it was sealed with): it is
// shown and managed as usual, but nothing can be sent to it until the key is restored or the
// secret rotated.
func (e *Endpoint) SecretUnavailable() bool { return e.secretUnavailable }

// EndpointParams are the merchant's choices for an endpoint.
type EndpointParams struct {
	URL           string
	EnabledEvents []string
	Description   string
}

// validate checks params for an endpoint of env whose URL follows the address rule d, and
// returns them normalised (events deduplicated, in the order given).
func (p EndpointParams) validate(env core.Environment, d Destinations) (EndpointParams, error) {
	if err := CheckURL(p.URL, env, d); err != nil {
		return p, err
	}
	if len(p.EnabledEvents) == 0 {
		return p, core.MissingField("enabled_events")
	}
	var events []string
	for i, ev := range p.EnabledEvents {
		if ev != AllEvents && !IsMerchantEvent(ev) {
			return p, core.InvalidField(fmt.Sprintf("enabled_events.%d", i), "Unknown event type '%s'.", ev)
		}
		if !slices.Contains(events, ev) {
			events = append(events, ev)
		}
	}
	if utf8.RuneCountInString(p.Description) > MaxDescriptionLen {
		return p, core.InvalidField("description", "description must be at most %d characters.", MaxDescriptionLen)
	}
	p.EnabledEvents = events
	return p, nil
}

// CheckURL accepts an absolute URL (core.CheckWebURL) that is https in live mode; test
// endpoints may also use http. Credentials in the URL are refused: they would be stored and
// shown with it. A host that is not a public address (an IP literal or "localhost") is refused
// by d (url_not_public) in every mode; a name is checked again, on every address it resolves
// to, by the sender at connect time.
func CheckURL(raw string, env core.Environment, d Destinations) error {
	if err := core.CheckWebURL(raw, "url"); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.User != nil {
		return core.InvalidField("url", "url must not contain credentials.")
	}
	if env == core.EnvLive && !strings.EqualFold(u.Scheme, "https") {
		return ErrHTTPSRequired
	}
	return d.Check(u)
}

// newEndpoint builds an enabled endpoint with a fresh id and secret.
func newEndpoint(scope core.Scope, p EndpointParams, d Destinations, now time.Time) (*Endpoint, error) {
	p, err := p.validate(scope.Env, d)
	if err != nil {
		return nil, err
	}
	return &Endpoint{
		id: core.NewID(PrefixEndpoint), scope: scope, url: p.URL, enabledEvents: p.EnabledEvents,
		description: p.Description, status: StatusEnabled, current: NewSecret(), created: now,
	}, nil
}

// NewSecret returns a fresh signing secret: whsec_ and ≥ 192 random bits (D2).
func NewSecret() string { return PrefixSecret + core.NewSecretPart() }

// Update replaces the merchant's choices (url, events, description), validated as on create.
func (e *Endpoint) Update(p EndpointParams, d Destinations) error {
	p, err := p.validate(e.scope.Env, d)
	if err != nil {
		return err
	}
	e.url, e.enabledEvents, e.description = p.URL, p.EnabledEvents, p.Description
	return nil
}

// Subscribes reports whether an event of type typ is to be delivered to this endpoint: typ is
// in the merchant catalog and the endpoint names it or "*". It says nothing about status.
//
// An app endpoint's copy (Installation set) subscribes by the app rules instead: typ is in the
// app catalog, named by the endpoint's events (exactly, "*" or "prefix.*"), and readable under
// the installation's scopes.
func (e *Endpoint) Subscribes(typ string) bool {
	if e.installation != "" {
		return AppSubscription(e.enabledEvents, typ) && AppMayRead(e.installationScopes, typ)
	}
	if !IsMerchantEvent(typ) {
		return false
	}
	return slices.Contains(e.enabledEvents, AllEvents) || slices.Contains(e.enabledEvents, typ)
}

// ActiveSecrets returns the secrets that sign a delivery at now: the current one first, then
// the previous one while its overlap lasts.
func (e *Endpoint) ActiveSecrets(now time.Time) []string {
	out := []string{e.current}
	if e.PreviousSecretExpiresAt(now) != nil {
		out = append(out, e.previous.Value)
	}
	return out
}

// PreviousSecretExpiresAt returns until when the previous secret still signs, if it does at
// now (after a rotation, for SecretOverlap), else nil. It never reveals the secret.
func (e *Endpoint) PreviousSecretExpiresAt(now time.Time) *time.Time {
	if e.previous == nil || e.previous.ExpiresAt == nil || !now.Before(*e.previous.ExpiresAt) {
		return nil
	}
	t := *e.previous.ExpiresAt
	return &t
}

// Secret returns the current secret. Callers must not show it except right after creation or
// rotation.
func (e *Endpoint) Secret() string { return e.current }

// RotateSecret makes a new current secret and keeps the old one valid for SecretOverlap (D10),
// so that deliveries carry both signatures meanwhile. A previous secret still overlapping from
// an earlier rotation is dropped at once: at most two secrets are ever active. It returns the
// new secret, to be shown once.
//
// An endpoint whose secret could not be opened gets a new secret without overlap (the old one
// cannot sign): rotating is how a merchant recovers from a lost sealing key.
func (e *Endpoint) RotateSecret(now time.Time) string {
	if e.secretUnavailable {
		e.previous, e.current, e.secretUnavailable = nil, NewSecret(), false
		return e.current
	}
	exp := now.Add(SecretOverlap)
	e.previous = &Secret{Value: e.current, ExpiresAt: &exp}
	e.current = NewSecret()
	return e.current
}

// Disable stops deliveries to the endpoint for reason. Disabling a disabled endpoint keeps its
// first reason.
func (e *Endpoint) Disable(reason DisabledReason) {
	if e.status == StatusDisabled {
		return
	}
	e.status, e.disabledReason = StatusDisabled, reason
}

// Enable resumes deliveries of new events and forgets the failure history.
func (e *Endpoint) Enable() {
	e.status, e.disabledReason, e.failingSince = StatusEnabled, "", nil
}

// RecordOutcome applies the result of one delivery attempt at now to the endpoint (D10): an
// acknowledgement (2xx) ends a run of failures; 410 Gone disables the endpoint; any other
// failure starts or continues a run, and a run lasting FailureWindow disables it. It reports
// whether the endpoint was disabled by this outcome.
func (e *Endpoint) RecordOutcome(o Outcome, now time.Time) (disabled bool) {
	if o.Acknowledged() {
		e.failingSince = nil
		return false
	}
	if e.failingSince == nil {
		t := now
		e.failingSince = &t
	}
	if e.status != StatusEnabled {
		return false
	}
	switch {
	case o.Gone():
		e.Disable(DisabledGone)
		return true
	case now.Sub(*e.failingSince) >= FailureWindow:
		e.Disable(DisabledFailing)
		return true
	}
	return false
}
