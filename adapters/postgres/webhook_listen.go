package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/lib/pq"
)

// WebhookChannel is the NOTIFY channel the events trigger signals when it queues an event for
// webhook fan-out into an empty queue (migrations 00004, 00011), and Redeliver and the test
// event signal when they make a delivery due (notifyWorkers).
const WebhookChannel = "kassa_webhooks"

// ListenWebhooks LISTENs on WebhookChannel over a connection of its own and returns a channel
// that receives a value (coalesced: at most one waiting) on every notification and after every
// reconnection, for webhooks.WorkerOptions.Wake. It stops when ctx ends. Notifications can be
// lost while the connection is down; the worker's polling covers that.
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
	l := pq.NewListener(url, time.Second, time.Minute, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventReconnected:
			signal()
		case pq.ListenerEventConnectionAttemptFailed, pq.ListenerEventDisconnected:
			if err != nil && ctx.Err() == nil {
				log.Warn("webhooks: LISTEN connection lost; polling meanwhile", "error", err.Error())
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
		ping := time.NewTicker(90 * time.Second)
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
