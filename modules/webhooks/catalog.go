package webhooks

import "github.com/kassa-pay/kassa/core"

// MerchantEvents is the list of events merchant webhooks receive (D10: the events of
// interface 6.1 plus the four checkout.session completion events), derived from the event
// catalog (core.EventCatalog, channel ChannelMerchant). An outbox event outside this list is
// never delivered to a merchant endpoint, even one subscribed to "*".
var MerchantEvents = core.EventTypesOn(core.ChannelMerchant)

// AllEvents subscribes an endpoint to every event of the merchant catalog, including those
// added later.
const AllEvents = "*"

// IsMerchantEvent reports whether typ is in the merchant catalog.
func IsMerchantEvent(typ string) bool { return core.IsEventOn(typ, core.ChannelMerchant) }
