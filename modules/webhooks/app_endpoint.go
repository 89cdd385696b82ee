package webhooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// App webhook endpoints (D10, D17): registered per app by the operator, they receive the app
// events (exactly the catalog of interface 6.2, core.ChannelApp) of every merchant that
// installed the app, one delivery per installation, and only the events whose object the
// installation's scopes may read (core.AppReadScope). Their deliveries go through the same
// worker as a merchant endpoint's: the store keeps, per app endpoint and merchant environment
// it delivers to, an Endpoint with the app endpoint's id, url, events and secret and the
// installation it delivers for (Endpoint.Installation). That Endpoint carries the health of
// the app endpoint for that merchant environment (a run of failures, 410 Gone), and
// uninstalling disables it with its pending deliveries.

// AppEvents is the app catalog (interface 6.2), in its documented order.
var AppEvents = core.EventTypesOn(core.ChannelApp)

// DisabledUninstalled: the installation the endpoint delivered for was uninstalled.
const DisabledUninstalled DisabledReason = "app_uninstalled"

// MaxAppEndpoints bounds the webhook endpoints of one app.
const MaxAppEndpoints = 16

// AppSubscription reports whether an app endpoint subscribed to events receives an event of
// type typ: typ is in the app catalog, and events names it, "*", or a prefix wildcard
// "prefix.*" with typ starting with "prefix.".
func AppSubscription(events []string, typ string) bool {
	if !core.IsEventOn(typ, core.ChannelApp) {
		return false
	}
	for _, e := range events {
		switch {
		case e == AllEvents, e == typ:
			return true
		case strings.HasSuffix(e, ".*") && strings.HasPrefix(typ, strings.TrimSuffix(e, "*")):
			return true
		}
	}
	return false
}

// AppMayRead reports whether an installation granted scopes may receive an event of type typ:
// the scope that reads the event's object (core.AppReadScope) is among them.
func AppMayRead(scopes []string, typ string) bool {
	need, ok := core.AppReadScope(core.EventType(typ))
	return ok && slices.Contains(scopes, need)
}

// validAppEvent reports whether e is a valid app subscription: "*", a type of the app catalog,
// or "prefix.*" where some type of the app catalog starts with "prefix.".
func validAppEvent(e string) bool {
	if e == AllEvents || slices.Contains(AppEvents, e) {
		return true
	}
	if !strings.HasSuffix(e, ".*") || len(e) < 3 {
		return false
	}
	prefix := strings.TrimSuffix(e, "*")
	for _, t := range AppEvents {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

// AppEndpointParams are the operator's choices for an app endpoint.
type AppEndpointParams struct {
	URL         string
	Events      []string
	Description string
}

// validate checks p and returns it normalised (events deduplicated, in the order given). The
// URL follows the rules of a test merchant endpoint (http allowed); a live event to an http
// URL fails at delivery (D17: the rules apply per delivery).
func (p AppEndpointParams) validate(d Destinations) (AppEndpointParams, error) {
	if err := CheckURL(p.URL, core.EnvTest, d); err != nil {
		return p, err
	}
	if len(p.Events) == 0 {
		return p, core.MissingField("events")
	}
	var events []string
	for i, ev := range p.Events {
		if !validAppEvent(ev) {
			return p, core.InvalidField(fmt.Sprintf("events.%d", i),
				"Unknown app event '%s': use an event of the app catalog, '*', or a prefix wildcard such as 'checkout.*'.", ev)
		}
		if !slices.Contains(events, ev) {
			events = append(events, ev)
		}
	}
	if utf8.RuneCountInString(p.Description) > MaxDescriptionLen {
		return p, core.InvalidField("description", "description must be at most %d characters.", MaxDescriptionLen)
	}
	p.Events = events
	return p, nil
}

// AppEndpoint is a webhook endpoint of an app.
type AppEndpoint struct {
	ID          string
	AppID       string
	URL         string
	Events      []string
	Description string
	// Secret is the signing secret (whsec_…): shown once, when the endpoint is created.
	Secret  string
	Created time.Time
	// SecretUnavailable: the stored secret could not be opened (the sealing key is missing or
	// wrong).
	SecretUnavailable bool
}

// AppDelivery is one delivery of an app event: a Delivery with the installation it is for.
type AppDelivery struct {
	Delivery
	Installation string
}

// AppDeliveryDetail is an app delivery with its attempts, oldest first.
type AppDeliveryDetail struct {
	AppDelivery
	AttemptLog []Attempt
}

// AppStore keeps app endpoints and reads app deliveries. Unknown ids, and ids of another
// app, answer ErrNotFound (an endpoint) or ErrDeliveryNotFound (a delivery).
type AppStore interface {
	// InsertAppEndpoint saves a new app endpoint, refusing with ErrEndpointLimit when the app
	// has MaxAppEndpoints.
	InsertAppEndpoint(ctx context.Context, e *AppEndpoint) error
	GetAppEndpoint(ctx context.Context, appID, id string) (*AppEndpoint, error)
	// ListAppEndpoints returns the app's endpoints, newest first.
	ListAppEndpoints(ctx context.Context, appID string) ([]*AppEndpoint, error)
	// UpdateAppEndpoint stores url, events and description of the endpoint and of every
	// merchant environment's copy of it, in one transaction.
	UpdateAppEndpoint(ctx context.Context, e *AppEndpoint) error
	// DeleteAppEndpoint removes the endpoint with its deliveries and their attempts.
	DeleteAppEndpoint(ctx context.Context, appID, id string) error
	// ListAppDeliveries returns the app's deliveries (all its installations, installed or
	// not), newest first, at most limit, skipping offset; more reports whether others follow.
	// installation, when set, keeps the deliveries of that installation only.
	ListAppDeliveries(ctx context.Context, appID, installation string, limit, offset int) (list []*AppDelivery, more bool, err error)
	// GetAppDelivery reads one delivery of the app with its attempts.
	GetAppDelivery(ctx context.Context, appID, id string) (*AppDeliveryDetail, error)
	// RedeliverApp makes a delivery of the app pending and due at now (as Store.Redeliver):
	// ErrEndpointDisabled when its endpoint is disabled for that merchant environment
	// (failing, gone, or the app uninstalled).
	RedeliverApp(ctx context.Context, appID, id string, now time.Time) (*AppDelivery, error)
}

// AppService is the operator's use cases of app endpoints and app deliveries. The app's
// existence is checked by the caller (modules/apps).
type AppService struct {
	store        AppStore
	clock        core.Clock
	destinations Destinations
}

// NewAppService returns the app endpoint use cases over store.
func NewAppService(store AppStore, clock core.Clock, destinations Destinations) (*AppService, error) {
	if store == nil || clock == nil {
		return nil, errors.New("webhooks: NewAppService: nil store or clock")
	}
	return &AppService{store: store, clock: clock, destinations: destinations}, nil
}

// CreateEndpoint registers an endpoint of the app; the returned endpoint carries its secret,
// shown once.
func (s *AppService) CreateEndpoint(ctx context.Context, appID string, p AppEndpointParams) (*AppEndpoint, error) {
	p, err := p.validate(s.destinations)
	if err != nil {
		return nil, err
	}
	e := &AppEndpoint{ID: core.NewID(PrefixEndpoint), AppID: appID, URL: p.URL, Events: p.Events,
		Description: p.Description, Secret: NewSecret(), Created: s.clock.Now()}
	if err := s.store.InsertAppEndpoint(ctx, e); err != nil {
		if errors.Is(err, ErrEndpointLimit) {
			return nil, core.NewError(core.TypeInvalidRequest, "endpoint_limit_reached", "",
				fmt.Sprintf("This app already has the maximum number of webhook endpoints (%d).", MaxAppEndpoints))
		}
		return nil, err
	}
	return e, nil
}

// GetEndpoint returns one endpoint of the app, without its secret.
func (s *AppService) GetEndpoint(ctx context.Context, appID, id string) (*AppEndpoint, error) {
	if !core.HasIDShape(id, PrefixEndpoint) {
		return nil, notFound(id)
	}
	e, err := s.store.GetAppEndpoint(ctx, appID, id)
	if err != nil {
		return nil, endpointErr(err, id)
	}
	e.Secret = ""
	return e, nil
}

// ListEndpoints returns the app's endpoints, newest first, without their secrets.
func (s *AppService) ListEndpoints(ctx context.Context, appID string) ([]*AppEndpoint, error) {
	list, err := s.store.ListAppEndpoints(ctx, appID)
	for _, e := range list {
		e.Secret = ""
	}
	return list, err
}

// AppEndpointChange is a partial update; nil fields stay as they are.
type AppEndpointChange struct {
	URL         *string
	Events      []string // nil: unchanged
	Description *string
}

// UpdateEndpoint changes url, events or description of an endpoint of the app. Deliveries
// already made keep going to the endpoint (at its new url).
func (s *AppService) UpdateEndpoint(ctx context.Context, appID, id string, c AppEndpointChange) (*AppEndpoint, error) {
	e, err := s.GetEndpoint(ctx, appID, id)
	if err != nil {
		return nil, err
	}
	p := AppEndpointParams{URL: e.URL, Events: e.Events, Description: e.Description}
	if c.URL != nil {
		p.URL = *c.URL
	}
	if c.Events != nil {
		p.Events = c.Events
	}
	if c.Description != nil {
		p.Description = *c.Description
	}
	if p, err = p.validate(s.destinations); err != nil {
		return nil, err
	}
	e.URL, e.Events, e.Description = p.URL, p.Events, p.Description
	if err := s.store.UpdateAppEndpoint(ctx, e); err != nil {
		return nil, endpointErr(err, id)
	}
	return e, nil
}

// DeleteEndpoint removes an endpoint of the app with its deliveries.
func (s *AppService) DeleteEndpoint(ctx context.Context, appID, id string) error {
	if !core.HasIDShape(id, PrefixEndpoint) {
		return notFound(id)
	}
	return endpointErr(s.store.DeleteAppEndpoint(ctx, appID, id), id)
}

// MaxAppDeliveriesPage bounds one page of an app's deliveries.
const MaxAppDeliveriesPage = 100

// ListDeliveries returns a page of the app's deliveries, newest first (limit 1 to 100,
// default 25; offset ≥ 0), optionally of one installation.
func (s *AppService) ListDeliveries(ctx context.Context, appID, installation string, limit, offset int) ([]*AppDelivery, bool, error) {
	if limit == 0 {
		limit = 25
	}
	if limit < 1 || limit > MaxAppDeliveriesPage {
		return nil, false, core.InvalidField("limit", "limit must be between 1 and %d.", MaxAppDeliveriesPage)
	}
	if offset < 0 {
		return nil, false, core.InvalidField("offset", "offset must not be negative.")
	}
	return s.store.ListAppDeliveries(ctx, appID, installation, limit, offset)
}

// GetDelivery returns one delivery of the app with its attempts.
func (s *AppService) GetDelivery(ctx context.Context, appID, id string) (*AppDeliveryDetail, error) {
	if !core.HasIDShape(id, PrefixDelivery) {
		return nil, deliveryNotFound(id)
	}
	d, err := s.store.GetAppDelivery(ctx, appID, id)
	if err != nil {
		return nil, deliveryErr(err, id, core.ListQuery{})
	}
	return d, nil
}

// Redeliver queues one more attempt of a delivery of the app, due now (as Service.Redeliver).
func (s *AppService) Redeliver(ctx context.Context, appID, id string) (*AppDelivery, error) {
	if !core.HasIDShape(id, PrefixDelivery) {
		return nil, deliveryNotFound(id)
	}
	d, err := s.store.RedeliverApp(ctx, appID, id, s.clock.Now())
	if errors.Is(err, ErrEndpointDisabled) {
		return nil, ErrAppDeliveriesStopped
	}
	if err != nil {
		return nil, deliveryErr(err, id, core.ListQuery{})
	}
	return d, nil
}

// ErrAppDeliveriesStopped: deliveries to the app endpoint are stopped for the delivery's
// merchant environment (the app was uninstalled, or the endpoint answered 410 Gone or failed
// for five days); nothing is sent there, by hand or otherwise.
var ErrAppDeliveriesStopped = core.NewError(core.TypeInvalidState, "webhook_endpoint_disabled", "",
	"Deliveries to this app endpoint are stopped for this merchant environment: the app was uninstalled, or the endpoint failed (410 Gone, or five days of failures). Update the endpoint to resume after failures; install the app again after an uninstall.")
