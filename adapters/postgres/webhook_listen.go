package postgres

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
)

// WebhookChannel is the NOTIFY channel the outbox writer signals when it queues an event for
// the fan-out into an empty queue (fanoutInsert), and Redeliver and the test
// event signal when they make a delivery due (notifyWorkers).
const WebhookChannel = "kassa_webhooks"

// The LISTEN connection's reconnection and liveness. After a lost connection (a restart of
// PostgreSQL, a failover) the listener tries again after listenRetryMin, doubling up to
// listenRetryMax, so it LISTENs again at most listenRetryMax after the database is back: one
// connection attempt a second per process while the database is down, instead of a back-off
// that left the workers polling for up to a minute after it came back. A connection that died
// without closing (a network partition) is found by a ping every listenPing.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = time.Second
	listenPing     = 10 * time.Second
)

// ListenWebhooks LISTENs on WebhookChannel over a connection of its own and returns a channel
// that receives a value (coalesced: at most one waiting) on every notification and after every
// reconnection, for webhooks.WorkerOptions.Wake. It stops when ctx ends. Notifications can be
// lost while the connection is down: the wake-up that follows the reconnection makes the
// workers look at once, and their polling covers the outage itself.
func ListenWebhooks(ctx context.Context, url string, log *slog.Logger) (<-chan struct{}, error) {
	if log == nil {
		log = slog.Default()
	}
	wake := make(chan struct{}, 1)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	// down is set from the loss of the connection to the reconnection: the loss is logged
	// once, not at every attempt of the outage.
	var down atomic.Bool
	l := pq.NewListener(url, listenRetryMin, listenRetryMax, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventReconnected:
			if down.Swap(false) {
				log.Info("webhooks: LISTEN connection back")
			}
			signal()
		case pq.ListenerEventConnectionAttemptFailed, pq.ListenerEventDisconnected:
			if err != nil && ctx.Err() == nil && !down.Swap(true) {
				log.Warn("webhooks: LISTEN connection lost; polling until it is back", "error", err.Error())
			}
		default: // the first connection: nothing was missed
		}
	})
	if err := l.Listen(WebhookChannel); err != nil {
		_ = l.Close() // the Listen error is the one to report
		return nil, err
	}
	go func() {
		defer func() { _ = l.Close() }()
		ping := time.NewTicker(listenPing)
		defer ping.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.Notify:
				signal()
			case <-ping.C:
				_ = l.Ping()
			}
		}
	}()
	return wake, nil
}
