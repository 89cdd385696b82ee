package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"

	"github.com/kassa-pay/kassa/conformance/harness"
	api "github.com/kassa-pay/kassa/openapi/gen/merchantapi"
)

// sandboxPayoutRef is the reference the sandbox rail answers a payout sent under key with
// (derived from the key, so a repeated send is the same transfer).
func sandboxPayoutRef(merchant, env, key string) string {
	h := sha256.Sum256([]byte(merchant + "/" + env + "/" + key))
	return "sbpo_" + hex.EncodeToString(h[:12])
}

// The daily payout run killed (SIGKILL) at each of its steps, then resumed by a new server
// (the keyed clock advance retried, and one more advance): one payout per currency, recorded
// once with one balance transaction, settling transactions whose nets sum to its amount, the
// available balance 0 after it, the ledger balanced, sent under its own id as the idempotency
// key, and one payout.created.
//
// The sandbox rail keeps no journal (its reference is derived from the key, it remembers
// nothing), so how often it was asked is not observable; what is: the payout is marked sent
// once, with the reference the rail gives its id.
func TestPayoutCrashes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, rule, table, events, when string
		unsent, sent                    int // payouts committed unsent and sent when the server died
	}{
		// The run's transaction wrote the payout and its balance transaction; killed as it
		// writes payout.created, its last write: nothing of the run commits.
		{"while the payout was being recorded", "the run starts again and records the payout once",
			"events", "INSERT", "NEW.type = 'payout.created'", 0, 0},
		// The payout is recorded and committed, the rail asked; killed as its acceptance is
		// written (for the sandbox rail, which keeps nothing, the same state as killed before
		// the rail call).
		{"after the payout was recorded, before it was marked sent", "the unsent payout is sent again under the same key and is not paid out twice",
			"payouts", "UPDATE", "NEW.sent_at IS NOT NULL AND OLD.sent_at IS NULL", 1, 0},
		// The payout is recorded and marked sent; killed as the advance's answer is stored
		// under its key: the retry and the next advance neither record it again nor send it
		// again (a sent payout is not among the unsent).
		{"after the payout was marked sent", "the sent payout is not recorded or marked sent again",
			"idempotency_keys", "UPDATE", "NEW.status IS NOT NULL AND OLD.status IS NULL", 0, 1},
	}
	for i, c := range cases {
		harness.Rule(t, "D16", "a payout run killed (SIGKILL) "+c.name+" is resumed: "+c.rule+", the ledger stays balanced", func(t *testing.T) {
			t.Parallel()
			name := "payout-crash-" + strconv.Itoa(i)
			first, db := idemLone(t, name, nil)
			o := newDashOwnerAt(t, first)
			now := clockFreeze(t, o.Test)
			if untilMidnight(now) < 120 {
				now = clockAdvance(t, o.Test, untilMidnight(now)+3600).Now
			}
			amount := int64(2500)
			s := csCreate(t, o.Test, api.CheckoutSessionCreate{Amount: &amount, Currency: "eur",
				CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"})
			if r, err := inflightPay(t, first, s.ClientSecret).ConfirmBuyerSessionWithResponse(context.Background(), s.Id,
				payCard(payCardInstant)); err != nil || r.StatusCode() != 200 {
				t.Fatalf("pay: %v", err)
			}
			s = csGet(t, o.Test, s.Id)
			net := 2500 - s.Payment.Fee.ServiceFeeChargeCurrency
			wantBalance(t, o, "before the run", net, 0)

			pause := phasePause(t, db, c.table, c.events, c.when)
			key := idemKey()
			body := `{"seconds":` + strconv.FormatInt(untilMidnight(now), 10) + `}`
			pending := idemSendPath(first.BaseURL, "/v1/test_helpers/clock/advance", o.TestKey, key, body)
			phaseWaitPaused(t, db)
			phaseKill(t, first, db, pause, c.table)
			if r, ok := <-pending; ok {
				t.Fatalf("the killed server answered: %d %s", r.Status, r.Body)
			}
			var unsent int
			if err := db.Get(&unsent, `SELECT count(*) FROM payouts WHERE merchant_id = $1 AND sent_at IS NULL`, o.ID); err != nil {
				t.Fatal(err)
			}
			if unsent != c.unsent {
				t.Fatalf("%d unsent payouts left by the killed server, want %d", unsent, c.unsent)
			}
			var sentBefore []string // when each payout the killed server marked sent was marked
			if err := db.Select(&sentBefore, `SELECT sent_at::text FROM payouts WHERE merchant_id = $1 AND sent_at IS NOT NULL`, o.ID); err != nil {
				t.Fatal(err)
			}
			if len(sentBefore) != c.sent {
				t.Fatalf("%d sent payouts left by the killed server, want %d", len(sentBefore), c.sent)
			}

			second, err := first.Sibling(context.Background(), name+"-2", harness.Options{Env: hookServerEnv})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(second.Stop)
			retry := rawAt(t, second.BaseURL, http.MethodPost, "/v1/test_helpers/clock/advance", o.TestKey, body,
				map[string]string{"Idempotency-Key": key})
			if retry.Status != 200 {
				t.Fatalf("retry: %d %s", retry.Status, retry.Body)
			}
			// One more advance: any payout still unsent is sent by it.
			if r := rawAt(t, second.BaseURL, http.MethodPost, "/v1/test_helpers/clock/advance", o.TestKey, `{"seconds":1}`, nil); r.Status != 200 {
				t.Fatalf("advance: %d %s", r.Status, r.Body)
			}

			var ps []struct {
				ID       string  `db:"id"`
				Currency string  `db:"currency"`
				Amount   int64   `db:"amount"`
				Txn      string  `db:"transaction_id"`
				RailRef  *string `db:"rail_ref"`
				Created  int64   `db:"created"`
			}
			if err := db.Select(&ps, `SELECT id, currency, amount, transaction_id, rail_ref, extract(epoch FROM created)::bigint AS created
				FROM payouts WHERE merchant_id = $1 AND environment = 'test'`, o.ID); err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 {
				t.Fatalf("%d payouts, want one for EUR: %+v", len(ps), ps)
			}
			p := ps[0]
			if p.Currency != "EUR" || p.Amount != net || p.Created != now+untilMidnight(now) {
				t.Fatalf("payout %+v, want %d EUR at %d", p, net, now+untilMidnight(now))
			}
			if want := sandboxPayoutRef(o.ID, "test", p.ID); p.RailRef == nil || *p.RailRef != want {
				t.Fatalf("payout sent with reference %v, want %s (the rail's answer to the payout's id as the key)", p.RailRef, want)
			}
			var sentAfter string
			if err := db.Get(&sentAfter, `SELECT sent_at::text FROM payouts WHERE merchant_id = $1 AND id = $2`, o.ID, p.ID); err != nil {
				t.Fatal(err)
			}
			if len(sentBefore) > 0 && (len(sentBefore) != 1 || sentBefore[0] != sentAfter) {
				t.Fatalf("marked sent at %v before the crash and %s after it: sent again", sentBefore, sentAfter)
			}
			var counts struct {
				PayoutTxns int   `db:"payout_txns"`
				OwnNet     int64 `db:"own_net"`
				Settled    int   `db:"settled"`
				SettledNet int64 `db:"settled_net"`
				Events     int   `db:"events"`
				Available  int64 `db:"available"`
				InTransit  int64 `db:"in_transit"`
				Sum        int64 `db:"sum"`
				Mismatched int   `db:"mismatched"`
			}
			if err := db.Get(&counts, `SELECT
					(SELECT count(*) FROM balance_transactions WHERE merchant_id = $1 AND environment = 'test' AND type = 'payout') AS payout_txns,
					(SELECT COALESCE(sum(net), 0) FROM balance_transactions WHERE merchant_id = $1 AND environment = 'test' AND id = $3) AS own_net,
					(SELECT count(*) FROM balance_transaction_payouts WHERE merchant_id = $1 AND environment = 'test' AND payout_id = $2) AS settled,
					(SELECT COALESCE(sum(b.net), 0) FROM balance_transaction_payouts x JOIN balance_transactions b
						ON b.merchant_id = x.merchant_id AND b.environment = x.environment AND b.id = x.transaction_id
						WHERE x.merchant_id = $1 AND x.environment = 'test' AND x.payout_id = $2) AS settled_net,
					(SELECT count(*) FROM events WHERE merchant_id = $1 AND environment = 'test' AND type = 'payout.created') AS events,
					(SELECT COALESCE(sum(balance), 0) FROM ledger_balances WHERE merchant_id = $1 AND environment = 'test' AND currency = 'EUR' AND account = 'available') AS available,
					(SELECT COALESCE(sum(balance), 0) FROM ledger_balances WHERE merchant_id = $1 AND environment = 'test' AND currency = 'EUR' AND account = 'payouts') AS in_transit,
					(SELECT COALESCE(sum(balance), 0) FROM ledger_balances WHERE merchant_id = $1 AND environment = 'test') AS sum,
					(SELECT count(*) FROM ledger_balances l WHERE l.merchant_id = $1 AND l.environment = 'test' AND l.balance <>
						(SELECT COALESCE(sum(CASE WHEN p.destination = l.account THEN p.amount ELSE -p.amount END), 0) FROM ledger_postings p
							WHERE p.merchant_id = l.merchant_id AND p.environment = l.environment AND p.currency = l.currency
							AND l.account IN (p.source, p.destination))) AS mismatched`,
				o.ID, p.ID, p.Txn); err != nil {
				t.Fatal(err)
			}
			if counts.PayoutTxns != 1 || counts.OwnNet != -p.Amount {
				t.Fatalf("payout balance transactions %+v, want one of %d", counts, -p.Amount)
			}
			if counts.Settled == 0 || counts.SettledNet != p.Amount {
				t.Fatalf("the payout settles %d transactions summing to %d, want %d", counts.Settled, counts.SettledNet, p.Amount)
			}
			if counts.Events != 1 {
				t.Fatalf("%d payout.created events, want 1", counts.Events)
			}
			if counts.Available != 0 || counts.InTransit != p.Amount {
				t.Fatalf("after the payout: available %d, in transit %d, want 0 and %d", counts.Available, counts.InTransit, p.Amount)
			}
			if counts.Sum != 0 || counts.Mismatched != 0 {
				t.Fatalf("ledger: accounts sum to %d, %d balances differ from their postings; want balanced", counts.Sum, counts.Mismatched)
			}
		})
	}
}
