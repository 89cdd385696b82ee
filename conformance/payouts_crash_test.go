package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
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
// (the keyed clock advance retried, and one more advance): one payout per currency (two
// currencies here), each recorded once with one balance transaction, settling transactions
// whose nets sum to its amount, the available balance 0 after it, sent under its own id as the
// idempotency key, one payout.created each, and the ledger balanced (the accounts sum to zero,
// each balance is the sum of its postings).
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
		// The run's transaction wrote the payouts and their balance transactions; killed as it
		// writes payout.created, its last write: nothing of the run commits.
		{"while the payouts were being recorded", "the run starts again and records one payout per currency",
			"events", "INSERT", "NEW.type = 'payout.created'", 0, 0},
		// The payouts are recorded and committed, the rail asked; killed as the acceptances are
		// written (for the sandbox rail, which keeps nothing, the same state as killed before
		// the rail call).
		{"after the payouts were recorded, before they were marked sent", "each unsent payout is sent again under its own id as the key and none is recorded twice",
			"payouts", "UPDATE", "NEW.sent_at IS NOT NULL AND OLD.sent_at IS NULL", 2, 0},
		// The payouts are recorded and marked sent; killed as the advance's answer is stored
		// under its key: the retry and the next advance neither record them again nor send
		// them again (a sent payout is not among the unsent).
		{"after the payouts were marked sent", "the sent payouts are not recorded or marked sent again",
			"idempotency_keys", "UPDATE", "NEW.status IS NOT NULL AND OLD.status IS NULL", 0, 2},
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
			// A payment in each of two currencies, available at once: the run makes a payout of each.
			nets := map[string]int64{}
			for cur, amount := range map[string]int64{"eur": 2500, "usd": 1800} {
				s := csCreate(t, o.Test, api.CheckoutSessionCreate{Amount: &amount, Currency: cur,
					CustomerName: "Ada Lovelace", CustomerEmail: "ada@example.com"})
				if r, err := inflightPay(t, first, s.ClientSecret).ConfirmBuyerSessionWithResponse(context.Background(), s.Id,
					payCard(payCardInstant)); err != nil || r.StatusCode() != 200 {
					t.Fatalf("pay %s: %v", cur, err)
				}
				s = csGet(t, o.Test, s.Id)
				nets[strings.ToUpper(cur)] = amount - s.Payment.Fee.ServiceFeeChargeCurrency
			}
			wantBalance(t, o, "before the run", nets["EUR"], 0)

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
			if len(ps) != len(nets) {
				t.Fatalf("%d payouts, want one per currency (%v): %+v", len(ps), nets, ps)
			}
			seen := map[string]bool{}
			for _, p := range ps {
				if seen[p.Currency] || p.Amount != nets[p.Currency] || p.Created != now+untilMidnight(now) {
					t.Fatalf("payout %+v, want one of %d %s at %d", p, nets[p.Currency], p.Currency, now+untilMidnight(now))
				}
				seen[p.Currency] = true
				if want := sandboxPayoutRef(o.ID, "test", p.ID); p.RailRef == nil || *p.RailRef != want {
					t.Fatalf("payout sent with reference %v, want %s (the rail's answer to the payout's id as the key)", p.RailRef, want)
				}
				var counts struct {
					OwnNet     int64 `db:"own_net"`
					Settled    int   `db:"settled"`
					SettledNet int64 `db:"settled_net"`
					Available  int64 `db:"available"`
					InTransit  int64 `db:"in_transit"`
				}
				if err := db.Get(&counts, `SELECT
						(SELECT COALESCE(sum(net), 0) FROM balance_transactions WHERE merchant_id = $1 AND environment = 'test' AND id = $3) AS own_net,
						(SELECT count(*) FROM balance_transaction_payouts WHERE merchant_id = $1 AND environment = 'test' AND payout_id = $2) AS settled,
						(SELECT COALESCE(sum(b.net), 0) FROM balance_transaction_payouts x JOIN balance_transactions b
							ON b.merchant_id = x.merchant_id AND b.environment = x.environment AND b.id = x.transaction_id
							WHERE x.merchant_id = $1 AND x.environment = 'test' AND x.payout_id = $2) AS settled_net,
						(SELECT COALESCE(sum(balance), 0) FROM ledger_balances WHERE merchant_id = $1 AND environment = 'test' AND currency = $4 AND account = 'available') AS available,
						(SELECT COALESCE(sum(balance), 0) FROM ledger_balances WHERE merchant_id = $1 AND environment = 'test' AND currency = $4 AND account = 'payouts') AS in_transit`,
					o.ID, p.ID, p.Txn, p.Currency); err != nil {
					t.Fatal(err)
				}
				if counts.OwnNet != -p.Amount {
					t.Fatalf("payout %s: its balance transaction nets %d, want %d", p.ID, counts.OwnNet, -p.Amount)
				}
				if counts.Settled == 0 || counts.SettledNet != p.Amount {
					t.Fatalf("payout %s of %d settles %d transactions summing to %d", p.ID, p.Amount, counts.Settled, counts.SettledNet)
				}
				if counts.Available != 0 || counts.InTransit != p.Amount {
					t.Fatalf("after the %s payout: available %d, in transit %d, want 0 and %d", p.Currency, counts.Available, counts.InTransit, p.Amount)
				}
			}
			// Sent once: a payout marked sent before the crash keeps that mark.
			var sentAfter []string
			if err := db.Select(&sentAfter, `SELECT sent_at::text FROM payouts WHERE merchant_id = $1 AND sent_at IS NOT NULL`, o.ID); err != nil {
				t.Fatal(err)
			}
			for _, at := range sentBefore {
				if !slices.Contains(sentAfter, at) {
					t.Fatalf("marked sent at %v before the crash and at %v after it: marked sent again", sentBefore, sentAfter)
				}
			}
			var ledger struct {
				PayoutTxns int   `db:"payout_txns"`
				Events     int   `db:"events"`
				Sum        int64 `db:"sum"`
				Mismatched int   `db:"mismatched"`
			}
			if err := db.Get(&ledger, `SELECT
					(SELECT count(*) FROM balance_transactions WHERE merchant_id = $1 AND environment = 'test' AND type = 'payout') AS payout_txns,
					(SELECT count(*) FROM events WHERE merchant_id = $1 AND environment = 'test' AND type = 'payout.created') AS events,
					(SELECT COALESCE(sum(balance), 0) FROM ledger_balances WHERE merchant_id = $1 AND environment = 'test') AS sum,
					(SELECT count(*) FROM ledger_balances l WHERE l.merchant_id = $1 AND l.environment = 'test' AND l.balance <>
						(SELECT COALESCE(sum(CASE WHEN p.destination = l.account THEN p.amount ELSE -p.amount END), 0) FROM ledger_postings p
							WHERE p.merchant_id = l.merchant_id AND p.environment = l.environment AND p.currency = l.currency
							AND l.account IN (p.source, p.destination))) AS mismatched`, o.ID); err != nil {
				t.Fatal(err)
			}
			if ledger.PayoutTxns != len(nets) || ledger.Events != len(nets) {
				t.Fatalf("%d payout balance transactions and %d payout.created events, want %d of each", ledger.PayoutTxns, ledger.Events, len(nets))
			}
			if ledger.Sum != 0 || ledger.Mismatched != 0 {
				t.Fatalf("ledger: accounts sum to %d, %d balances differ from their postings; want balanced", ledger.Sum, ledger.Mismatched)
			}
		})
	}
}
