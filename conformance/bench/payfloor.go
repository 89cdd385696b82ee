package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/kassa-pay/kassa/core"
)

// floorConfirm is the floor of a confirmation: the rows a successful card confirmation must
// write, written straight into Postgres the cheapest way this data model allows, through the
// driver the server uses and with its binary_parameters (one round trip per statement):
//
//  1. one statement, committed: the session marked as charging and the charge attempt recorded
//     (the first transaction of a charge, issue 10 §2);
//  2. the sandbox journal row, in one statement whose commit does not wait for the WAL flush
//     (as the sandbox writes it);
//  3. one statement, committed: the session completed, the attempt applied, the payment, its
//     two events (payment_intent.succeeded, checkout.session.completed) and the receipt's mail
//     row (the second transaction).
//
// No read, no HTTP, no Go logic: three round trips and the rows. Its sessions are inserted
// before the window (seedConfirmFloor), so a request of this floor is a confirmation only.
// Interleaved with creating a session through the API, its ratio r (confirmations/s ÷ sessions
// created/s) bounds what a whole payment (create + confirm) can reach against create with
// these rows on this machine: r ÷ (1 + r), were the confirmation request to cost nothing but
// its rows.
const floorConfirm = "floor: a confirmation's rows (3 statements)"

// confirmFloorPool is how many open sessions seedConfirmFloor inserts per second of window
// (warm-up included); an operation past the pool inserts its session first (counted).
const confirmFloorPool = 4000

type confirmFloor struct {
	url        string
	conns      int
	merchantID string
	size       int
	db         *sqlx.DB
	ids        []string
	next       atomic.Int64
}

func newConfirmFloor(url, merchantID string, conns int, window time.Duration) *confirmFloor {
	return &confirmFloor{url: url, conns: conns, merchantID: merchantID,
		size: int(window.Seconds()*confirmFloorPool) + confirmFloorPool}
}

// withBinary adds binary_parameters=yes to a URL-form connection string (the server's setting).
func withBinary(url string) string {
	if strings.Contains(url, "binary_parameters") {
		return url
	}
	if strings.Contains(url, "?") {
		return url + "&binary_parameters=yes"
	}
	return url + "?binary_parameters=yes"
}

func (f *confirmFloor) open(ctx context.Context) error {
	db, err := openFloorDB(ctx, withBinary(f.url), f.conns)
	if err != nil {
		return err
	}
	f.db = db
	// The pool of open sessions, inserted in one statement, outside the measured window.
	ids := make([]string, f.size)
	for i := range ids {
		ids[i] = core.NewID(core.PrefixSession)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO checkout_sessions (
			id, merchant_id, environment, checkout_mode, status, amount, currency,
			client_secret, client_secret_hash, checkout_url, embed_url, customer_name, customer_email,
			reference, description, success_url, cancel_url, line_items, metadata, created, expires_at)
		SELECT id, $1, 'test', 'payment', 'open', 4990, 'EUR', id || '_secret', sha256(convert_to(id, 'UTF8')),
			'https://pay.example/c/' || id, 'https://pay.example/embed/' || id, 'Ada Lovelace', 'ada@example.com',
			'order-10042', 'Two books', 'https://shop.example/thanks', 'https://shop.example/cart',
			'[{"name": "The Analytical Engine", "amount": 2495, "quantity": 2}]', '{"order_id": "10042"}',
			now(), now() + interval '1 day'
		FROM unnest($2::text[]) AS id`, f.merchantID, "{"+strings.Join(ids, ",")+"}"); err != nil {
		db.Close()
		f.db = nil
		return fmt.Errorf("confirm floor: seed sessions: %w", err)
	}
	f.ids = ids
	f.next.Store(0)
	return nil
}

func (f *confirmFloor) close() {
	if f.db != nil {
		f.db.Close()
		f.db = nil
	}
}

// scenario is the floor as a scenario.
func (f *confirmFloor) scenario() scenario {
	return scenario{name: floorConfirm, before: f.open, after: f.close, newOp: func(int) op {
		return func(ctx context.Context) error {
			i := int(f.next.Add(1)) - 1
			if i >= len(f.ids) {
				return fmt.Errorf("confirm floor: pool of %d sessions used up (raise confirmFloorPool)", len(f.ids))
			}
			return f.confirm(ctx, f.ids[i])
		}
	}}
}

func (f *confirmFloor) confirm(ctx context.Context, sid string) error {
	key := sid + ":1"
	var n int
	if err := f.db.GetContext(ctx, &n, `WITH s AS (
			UPDATE checkout_sessions SET confirm_attempts = confirm_attempts + 1, charging_attempt = $3
			WHERE merchant_id = $1 AND environment = 'test' AND id = $2 AND status = 'open' AND charging_attempt IS NULL
			RETURNING amount, currency),
		a AS (
			INSERT INTO charge_attempts (merchant_id, environment, idempotency_key, payable_kind, reference, number, kind,
				amount, currency, method, processor_ref, approve, status, charged_at, started_at)
			SELECT $1, 'test', $3, 'checkout_session', $2, 1, 'charge', amount, currency, 'card', NULL, false, 'pending', now(), now() FROM s
			RETURNING 1)
		SELECT count(*) FROM a`, f.merchantID, sid, key); err != nil {
		return fmt.Errorf("confirm floor: begin charge: %w", err)
	}
	if n != 1 {
		return fmt.Errorf("confirm floor: begin charge: %d rows, want 1", n)
	}
	ref := "sbx_ch_card_ok_0_visa_4242_US_credit_122029_-_" + core.RandomBase62(24)
	result := `{"Card": {"Brand": "visa", "Last4": "4242", "Country": "US", "ExpYear": 2029, "Funding": "credit", "ExpMonth": 12}, "SEPA": null, "Action": null, "Dispute": null, "Outcome": "succeeded", "SettlesAt": null, "DeclineCode": "", "ProcessorRef": "` + ref + `", "FailureMessage": "", "PaymentMethodRef": "", "FundsAvailableNow": false}`
	if _, err := f.db.ExecContext(ctx, `WITH ins AS (
			INSERT INTO sandbox_charges (merchant_id, environment, idempotency_key, result)
			VALUES ($1, 'test', $2, $3) RETURNING 1)
		SELECT (SELECT count(*) FROM ins), set_config('synchronous_commit', 'off', true)`, f.merchantID, key, result); err != nil {
		return fmt.Errorf("confirm floor: sandbox journal: %w", err)
	}
	pid := core.NewID(core.PrefixPayment)
	now := time.Now().UTC()
	payment := fmt.Sprintf(`{"id": "%s", "fee": {"currency": "EUR", "psp_fee_eur": 120, "service_fee_eur": 165, "service_fee_charge_currency": 165}, "card": {"brand": "visa", "last4": "4242", "country": "US", "funding": "credit"}, "amount": 4990, "object": "payment", "status": "succeeded", "created": %d, "currency": "EUR", "customer": {"name": "Ada Lovelace", "email": "ada@example.com"}, "metadata": {"order_id": "10042"}, "reference": "order-10042", "invoice_id": null, "session_id": "%s", "payment_method": "card", "amount_refunded": 0}`,
		pid, now.Unix(), sid)
	session := fmt.Sprintf(eventData, sid, now.Unix(), now.Add(24*time.Hour).Unix())
	if err := f.db.GetContext(ctx, &n, `WITH s AS (
			UPDATE checkout_sessions SET status = 'complete', charging_attempt = NULL
			WHERE merchant_id = $1 AND environment = 'test' AND id = $2 AND charging_attempt = $3 RETURNING 1),
		a AS (
			UPDATE charge_attempts SET status = 'applied', outcome = 'succeeded', resolved_at = now()
			WHERE merchant_id = $1 AND environment = 'test' AND idempotency_key = $3 AND status = 'pending' RETURNING 1),
		p AS (
			INSERT INTO payments (id, merchant_id, environment, payable_kind, payable_key, session_id, amount, currency, status,
				payment_method, card_brand, card_last4, card_country, card_funding, card_exp_month, card_exp_year,
				fee_service_eur, fee_psp_eur, fee_service_charge_currency, fee_currency, fee_rate_date, fee_rate,
				customer_name, customer_email, reference, metadata, processor_ref, created, available_at)
			VALUES ($4, $1, 'test', 'checkout_session', $2, $2, 4990, 'EUR', 'succeeded', 'card', 'visa', '4242', 'US', 'credit', 12, 2029,
				165, 120, 165, 'EUR', $5::timestamptz::date, 1, 'Ada Lovelace', 'ada@example.com', 'order-10042',
				'{"order_id": "10042"}', $6, $5, $5::timestamptz + interval '2 days')
			RETURNING 1),
		e AS (
			INSERT INTO events (id, merchant_id, environment, type, created, object, object_id, object_kind)
			VALUES ($7, $1, 'test', 'payment_intent.succeeded', $5, $8, $4, 'payment'),
				($9, $1, 'test', 'checkout.session.completed', $5, $10, $2, 'checkout.session')
			RETURNING 1),
		q AS (
			INSERT INTO event_fanout (merchant_id, environment, event_id) VALUES ($1, 'test', $7), ($1, 'test', $9)
			RETURNING 1),
		m AS (
			INSERT INTO mail_outbox (merchant_id, environment, id, kind, subject_id, next_attempt_at, created)
			VALUES ($1, 'test', $11, 'receipt', $4, $5, $5) RETURNING 1)
		SELECT (SELECT count(*) FROM s) + (SELECT count(*) FROM a) + (SELECT count(*) FROM p) +
			(SELECT count(*) FROM e) + (SELECT count(*) FROM m)`,
		f.merchantID, sid, key, pid, now, ref,
		core.NewID(core.PrefixEvent), payment, core.NewID(core.PrefixEvent), session, "mob_"+core.RandomBase62(24)); err != nil {
		return fmt.Errorf("confirm floor: apply outcome: %w", err)
	}
	if n != 6 {
		return fmt.Errorf("confirm floor: apply outcome: %d rows, want 6", n)
	}
	return nil
}
