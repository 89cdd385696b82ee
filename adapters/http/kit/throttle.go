package kit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/core"
)

// KeyedLimiter is a token bucket per key, behind the abuse throttles of this file
// (adapters/ratelimit.Keyed implements it).
type KeyedLimiter interface {
	// Allow takes one token from key's bucket; when none is left it takes nothing and
	// returns false with the wait (whole seconds, at least one).
	Allow(key string) (ok bool, retryAfter time.Duration)
	// Wait is how long until key's bucket holds a token (zero: now). It takes nothing.
	Wait(key string) time.Duration
	// Take takes one token even from an empty bucket, which then owes it.
	Take(key string)
}

// Key is the client address the abuse throttles count per: Of, with an IPv6 address cut to
// its /64 prefix, since one host or one customer line commonly holds a whole /64.
func (c ClientIP) Key(r *http.Request) string { return addressKey(c.Of(r)) }

func addressKey(a string) string {
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return a
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return a
	}
	return p.String()
}

// WriteRateLimited writes 429 rate_limit_error/rate_limited with Retry-After (whole seconds,
// at least one); what says what was limited, e.g. "Too many requests".
func WriteRateLimited(w http.ResponseWriter, r *http.Request, wait time.Duration, what string) {
	secs := retrySeconds(wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	WriteError(w, r, core.NewError(core.TypeRateLimit, codeRateLimited, "",
		what+". Retry after "+strconv.Itoa(secs)+" second(s)."))
}

func retrySeconds(wait time.Duration) int { return max(int((wait+time.Second-1)/time.Second), 1) }

// AuthThrottle bounds failed authentication per client address: every answer 401 of the
// handlers it wraps takes a token from the address's bucket (adapters/ratelimit.Keyed, e.g. 20
// a minute with bursts of 20). While the bucket is empty every request from the address is
// answered 429 rate_limited with Retry-After before its credentials are looked at, so a flood
// of guessed keys learns nothing; answers other than 401 take nothing, so a client with a
// valid key is refused only while its address is over the limit and passes again as soon as
// the bucket refills. One warning is logged when an address starts being refused and one line
// when it is let through again, never one per request.
type AuthThrottle struct {
	limiter  KeyedLimiter
	clientIP ClientIP
	bursts   *burstLog
}

// NewAuthThrottle returns the throttle of one listener; l nil means no throttle.
func NewAuthThrottle(l KeyedLimiter, clientIP ClientIP, log *slog.Logger) *AuthThrottle {
	return &AuthThrottle{limiter: l, clientIP: clientIP,
		bursts: newBurstLog(log, "authentication failures over the limit: refusing the client address")}
}

// Wrap puts the throttle in front of next (the contract gate of an API). A nil throttle
// returns next.
func (t *AuthThrottle) Wrap(next http.Handler) http.Handler {
	return t.WrapWith(next, func(w http.ResponseWriter, r *http.Request, wait time.Duration) {
		WriteRateLimited(w, r, wait, "Too many failed authentications from this address")
	})
}

// WrapWith is Wrap for an API with an envelope of its own (the App API): refuse writes the 429,
// with Retry-After, while the address is over the limit.
func (t *AuthThrottle) WrapWith(next http.Handler, refuse func(w http.ResponseWriter, r *http.Request, wait time.Duration)) http.Handler {
	if t == nil || t.limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := t.clientIP.Key(r)
		if wait := t.limiter.Wait(addr); wait > 0 {
			t.bursts.refused(r.Context(), addr, addr, wait)
			refuse(w, r, wait)
			return
		}
		t.bursts.passed(r.Context(), addr)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == http.StatusUnauthorized {
			t.limiter.Take(addr)
		}
	})
}

// LimitRule is one request rate of an API: Limiter counts the requests of each Key; a request
// whose Key is "" is not counted by this rule.
type LimitRule struct {
	Limiter KeyedLimiter
	Key     func(r *http.Request) string
}

// SecretKey is the form a rule keys a credential by (a session cookie, a client secret): its
// SHA-256 in hex, so no limiter holds it in clear.
func SecretKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// RequestLimits refuses a request with 429 rate_limited and Retry-After when one of its rules
// has no token left for it; the rules are tried in order and a refused request takes no token
// from the later ones. Refusals are logged once per burst and client address, never with the
// key (which may hold a session token or a client secret).
type RequestLimits struct {
	rules    []LimitRule
	clientIP ClientIP
	bursts   *burstLog
}

// NewRequestLimits returns the limits of one API; rules with a nil Limiter are skipped.
func NewRequestLimits(log *slog.Logger, clientIP ClientIP, rules ...LimitRule) *RequestLimits {
	l := &RequestLimits{clientIP: clientIP, bursts: newBurstLog(log, "request rate over the limit: refusing requests")}
	for _, r := range rules {
		if r.Limiter != nil && r.Key != nil {
			l.rules = append(l.rules, r)
		}
	}
	return l
}

// Wrap puts the limits in front of next. Nil limits, or limits without rules, return next.
func (l *RequestLimits) Wrap(next http.Handler) http.Handler {
	if l == nil || len(l.rules) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i, rule := range l.rules {
			key := rule.Key(r)
			if key == "" {
				continue
			}
			id := strconv.Itoa(i) + "\x00" + key
			if ok, wait := rule.Limiter.Allow(key); !ok {
				l.bursts.refused(r.Context(), id, l.clientIP.Key(r), wait)
				WriteRateLimited(w, r, wait, "Too many requests")
				return
			}
			l.bursts.passed(r.Context(), id)
		}
		next.ServeHTTP(w, r)
	})
}

// burstLog logs the start of each burst of refusals of one bucket once, and its end (the first
// request of the bucket let through again, or a minute without refusals) with how many
// requests it refused. A bucket is followed by an id that may hold a secret and is never
// logged; lines name the client address.
type burstLog struct {
	log *slog.Logger
	msg string

	mu         sync.Mutex
	open       map[string]*burst
	unfollowed int
	lastSweep  time.Time
}

type burst struct {
	addr          string
	started, last time.Time
	refused       int
}

// maxOpenBursts bounds the addresses followed at once; refusals of further addresses are only
// counted, and the count logged once per sweep (memory and log stay bounded under a flood from
// many addresses).
const maxOpenBursts = 1 << 14

// burstQuiet is how long without a refusal ends a burst.
const burstQuiet = time.Minute

func newBurstLog(log *slog.Logger, msg string) *burstLog {
	if log == nil {
		log = slog.Default()
	}
	return &burstLog{log: log, msg: msg, open: map[string]*burst{}, lastSweep: time.Now()}
}

func (b *burstLog) refused(ctx context.Context, id, addr string, wait time.Duration) {
	now := time.Now()
	b.mu.Lock()
	b.sweep(ctx, now)
	bu, ok := b.open[id]
	if !ok && len(b.open) >= maxOpenBursts {
		b.unfollowed++
		b.mu.Unlock()
		return
	}
	if !ok {
		bu = &burst{addr: addr, started: now}
		b.open[id] = bu
	}
	bu.refused++
	bu.last = now
	b.mu.Unlock()
	if !ok {
		b.log.WarnContext(ctx, b.msg, "client_address", addr, "retry_after_s", retrySeconds(wait),
			"request_id", RequestID(ctx))
	}
}

func (b *burstLog) passed(ctx context.Context, id string) {
	now := time.Now()
	b.mu.Lock()
	b.sweep(ctx, now)
	bu, ok := b.open[id]
	if ok {
		delete(b.open, id)
	}
	b.mu.Unlock()
	if ok {
		b.ended(ctx, bu)
	}
}

// sweep ends the bursts without a refusal for burstQuiet. Caller holds b.mu.
func (b *burstLog) sweep(ctx context.Context, now time.Time) {
	if now.Sub(b.lastSweep) < burstQuiet/2 {
		return
	}
	b.lastSweep = now
	if b.unfollowed > 0 {
		b.log.WarnContext(ctx, b.msg+" (addresses beyond those followed)", "refused", b.unfollowed)
		b.unfollowed = 0
	}
	for id, bu := range b.open {
		if now.Sub(bu.last) >= burstQuiet {
			delete(b.open, id)
			b.ended(ctx, bu)
		}
	}
}

func (b *burstLog) ended(ctx context.Context, bu *burst) {
	b.log.InfoContext(ctx, "throttled burst ended", "client_address", bu.addr, "refused", bu.refused,
		"duration_s", int(bu.last.Sub(bu.started).Seconds()))
}
