package sandbox

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// A sandbox reference carries everything a later call needs, so the adapter keeps no state
// and any process can serve CompleteAction and Settle. It holds only what D6 allows to be
// stored (brand, last four, country, funding, expiry), never a number or an IBAN:
//
//	sbx_<ch|pm>_<card|sepa>_<scenario>_<save 0|1>_<brand>_<last4>_<country>_<funding>_<MMYYYY>_<settles unix>_<nonce>
//
// "ch" is a charge (ChargeResult.ProcessorRef), "pm" a saved payment method
// (ChargeResult.PaymentMethodRef). Empty fields are "-". The reference is not signed: it is
// produced by the server and stored, never taken from a browser.
type ref struct {
	kind     string // refCharge or refMethod
	method   string // methodCard or methodSEPA
	scenario string
	save     bool
	brand    string
	last4    string
	country  string
	funding  string
	expMonth int
	expYear  int
	settles  int64 // Unix seconds; 0 = none
	nonce    string
}

const (
	refPrefix  = "sbx"
	refCharge  = "ch"
	refMethod  = "pm"
	methodCard = "card"
	methodSEPA = "sepa"
	refFields  = 12
	nonceLen   = 24
)

func (r ref) String() string {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	exp, settles, save := "-", "-", "0"
	if r.expMonth != 0 {
		exp = fmt.Sprintf("%02d%04d", r.expMonth, r.expYear)
	}
	if r.settles != 0 {
		settles = strconv.FormatInt(r.settles, 10)
	}
	if r.save {
		save = "1"
	}
	return strings.Join([]string{refPrefix, r.kind, r.method, r.scenario, save, dash(r.brand),
		dash(r.last4), dash(r.country), dash(r.funding), exp, settles, r.nonce}, "_")
}

// parseRef reads a reference written by ref.String.
func parseRef(s string) (ref, error) {
	bad := fmt.Errorf("%w: not a sandbox reference", ports.ErrProcessorRefUnknown)
	f := strings.Split(s, "_")
	if len(f) != refFields || f[0] != refPrefix {
		return ref{}, bad
	}
	undash := func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	}
	r := ref{kind: f[1], method: f[2], scenario: f[3], brand: undash(f[5]), last4: undash(f[6]),
		country: undash(f[7]), funding: undash(f[8]), nonce: f[11]}
	if (r.kind != refCharge && r.kind != refMethod) || (r.method != methodCard && r.method != methodSEPA) ||
		(f[4] != "0" && f[4] != "1") || len(r.nonce) != nonceLen {
		return ref{}, bad
	}
	r.save = f[4] == "1"
	if f[9] != "-" {
		if len(f[9]) != 6 {
			return ref{}, bad
		}
		m, err1 := strconv.Atoi(f[9][:2])
		y, err2 := strconv.Atoi(f[9][2:])
		if err1 != nil || err2 != nil || m < 1 || m > 12 {
			return ref{}, bad
		}
		r.expMonth, r.expYear = m, y
	}
	if f[10] != "-" {
		u, err := strconv.ParseInt(f[10], 10, 64)
		if err != nil || u <= 0 {
			return ref{}, bad
		}
		r.settles = u
	}
	return r, nil
}

// cardInfo is the storable description of the card a reference was made for.
func (r ref) cardInfo() *ports.CardInfo {
	return &ports.CardInfo{Brand: r.brand, Last4: r.last4, Country: r.country, Funding: r.funding,
		ExpMonth: r.expMonth, ExpYear: r.expYear}
}

func (r ref) sepaInfo() *ports.SEPAInfo {
	return &ports.SEPAInfo{Country: r.country, Last4: r.last4}
}

// settlesAt is the settlement time of a processing SEPA charge.
func (r ref) settlesAt() *time.Time {
	if r.settles == 0 {
		return nil
	}
	t := time.Unix(r.settles, 0).UTC()
	return &t
}

// savedMethod is the reusable method a succeeded charge of r saves.
func (r ref) savedMethod() string {
	pm := r
	pm.kind, pm.save, pm.settles = refMethod, false, 0
	return pm.String()
}

// newNonce makes the unique tail of a reference. With an idempotency key it is derived from
// scope, reference and key, so a retried Charge answers the same ProcessorRef; without one it
// is random.
func newNonce(req ports.ChargeRequest) string {
	if req.IdempotencyKey == "" {
		return core.RandomBase62(nonceLen)
	}
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	sum := sha256.Sum256([]byte(req.Scope.MerchantID + "\x00" + string(req.Scope.Env) + "\x00" +
		req.Reference + "\x00" + req.IdempotencyKey))
	b := make([]byte, nonceLen)
	for i := range b {
		b[i] = base62[int(sum[i])%len(base62)]
	}
	return string(b)
}
