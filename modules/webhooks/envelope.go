package webhooks

import (
	"encoding/json"

	"github.com/kassa-pay/kassa/core"
)

// envelope is the body of a delivery (D10, interface 6.2 without the app-only installation).
type envelope struct {
	ID          string       `json:"id"`
	Object      string       `json:"object"`
	Type        string       `json:"type"`
	Environment string       `json:"environment"`
	APIVersion  string       `json:"api_version"`
	Created     int64        `json:"created"`
	Data        envelopeData `json:"data"`
}

type envelopeData struct {
	Object json.RawMessage `json:"object"`
}

// Render renders data.object of an event for a channel (adapters/wire RenderEvent).
type Render func(ev core.EventRecord, ch core.Channel) (json.RawMessage, error)

// Envelope returns the JSON body delivered for ev with data.object data (rendered for the
// delivery's channel): {id, object:"event", type, environment, api_version, created,
// data:{object}}. The same event always gives the same bytes.
func Envelope(ev OutboxEvent, data json.RawMessage) ([]byte, error) {
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return json.Marshal(envelope{
		ID: ev.ID, Object: "event", Type: string(ev.Type), Environment: string(ev.Scope.Env),
		APIVersion: core.APIVersion, Created: ev.Created.Unix(), Data: envelopeData{Object: data},
	})
}

// appEnvelope is the body of an app event delivery (interface 6.2, D17): the envelope with the
// installation the event is delivered for.
type appEnvelope struct {
	ID           string       `json:"id"`
	Object       string       `json:"object"`
	Type         string       `json:"type"`
	Environment  string       `json:"environment"`
	Installation string       `json:"installation"`
	APIVersion   string       `json:"api_version"`
	Created      int64        `json:"created"`
	Data         envelopeData `json:"data"`
}

// AppEnvelope returns the JSON body delivered for ev to an app installed as installation, with
// data.object data rendered for the app channel.
func AppEnvelope(ev OutboxEvent, installation string, data json.RawMessage) ([]byte, error) {
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return json.Marshal(appEnvelope{
		ID: ev.ID, Object: "event", Type: string(ev.Type), Environment: string(ev.Scope.Env), Installation: installation,
		APIVersion: core.APIVersion, Created: ev.Created.Unix(), Data: envelopeData{Object: data},
	})
}
