package webhooks

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// RetrySchedule is the wait before each retry after a failed attempt (D10): the first retry
// comes 5 s after the first attempt fails, the last 24 h after the ninth. About 3 days in all.
var RetrySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// MaxAttempts is the first attempt plus one per retry.
var MaxAttempts = len(RetrySchedule) + 1

// Jitter is the relative spread applied to every retry delay (±10%), so that the retries of
// many deliveries failing together do not arrive together.
const Jitter = 0.10

// FailureWindow of uninterrupted failure disables an endpoint (D10).
const FailureWindow = 5 * 24 * time.Hour

// Timeout is how long the receiver has to answer (D10, interface 8).
const Timeout = 10 * time.Second

// ExcerptLimit caps the recorded excerpt of a response body, in bytes.
const ExcerptLimit = 4096

// RetryDelay returns the wait after the given number of failed attempts (1-based) with jitter
// applied from r, a uniform number in [0, 1): the delay times 1 + (2r-1)·Jitter. ok is false
// when no retry is left.
func RetryDelay(failedAttempts int, r float64) (d time.Duration, ok bool) {
	if failedAttempts < 1 || failedAttempts > len(RetrySchedule) {
		return 0, false
	}
	base := RetrySchedule[failedAttempts-1]
	return time.Duration(float64(base) * (1 + (2*r-1)*Jitter)), true
}

// DefaultRand is the jitter source: math/rand/v2 (not a secret).
func DefaultRand() float64 { return rand.Float64() } //nolint:gosec // G404: retry jitter spreads load; nothing depends on it being unpredictable

// Outcome is the result of one delivery attempt as the sender saw it.
type Outcome struct {
	StatusCode int           // 0 when no response came
	Latency    time.Duration // from sending to the end of the response (or the failure)
	Excerpt    string        // the start of the response body, at most ExcerptLimit bytes
	Err        string        // transport failure (timeout, refused address, connection reset…), else ""
}

// Acknowledged reports whether the receiver took the event: a 2xx answer, nothing else (a
// redirect is not followed and does not acknowledge).
func (o Outcome) Acknowledged() bool { return o.Err == "" && o.StatusCode >= 200 && o.StatusCode < 300 }

// Gone reports a 410 Gone answer, which disables the endpoint.
func (o Outcome) Gone() bool { return o.Err == "" && o.StatusCode == 410 }

// Excerpt returns the start of a response body fit for storage: at most ExcerptLimit bytes,
// cut on a character boundary, invalid UTF-8 and NUL bytes replaced.
func Excerpt(b []byte) string {
	if len(b) > ExcerptLimit {
		b = b[:ExcerptLimit]
		// Drop a character cut in half by the limit.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// DeliveryStatus is the state of one event × endpoint delivery.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"   // waiting for its next attempt
	DeliverySucceeded DeliveryStatus = "succeeded" // acknowledged with a 2xx
	DeliveryFailed    DeliveryStatus = "failed"    // every attempt of the schedule failed
	DeliveryDisabled  DeliveryStatus = "disabled"  // the endpoint was disabled before success
)

// Next is what happens to a delivery after an attempt.
type Next struct {
	Status        DeliveryStatus
	NextAttemptAt *time.Time // set when Status is pending
}

// decide applies the policy to attempt number `attempt` (1-based) with outcome o at now;
// endpointDisabled says the endpoint is (now) disabled.
func decide(attempt int, o Outcome, now time.Time, endpointDisabled bool, r float64) Next {
	if o.Acknowledged() {
		return Next{Status: DeliverySucceeded}
	}
	if endpointDisabled {
		return Next{Status: DeliveryDisabled}
	}
	d, ok := RetryDelay(attempt, r)
	if !ok {
		return Next{Status: DeliveryFailed}
	}
	at := now.Add(d)
	return Next{Status: DeliveryPending, NextAttemptAt: &at}
}

// Destinations is the address rule of webhook targets. Every endpoint, test mode included,
// must point at a public address: a merchant could otherwise make the server POST to, and
// show the answers of, services reachable only from inside the host or its network (cloud
// metadata, databases' HTTP ports, admin consoles). The rule is checked twice: here, on the
// URL saved (an IP literal or a name that is local by definition), and by the sender on every
// address it actually connects to, after name resolution, so that a name which resolves to a
// private address at delivery time (DNS rebinding) is refused as well.
type Destinations struct {
	// AllowPrivate lifts the rule (the development flag: a local receiver on loopback).
	AllowPrivate bool
}

// errDestinationNotPublic is the 400 of a URL whose host is not a public address.
func errDestinationNotPublic(host, what string) error {
	return core.NewError(core.TypeInvalidRequest, CodeURLNotPublic, "url",
		fmt.Sprintf("url must point to a public address: %s is %s. Webhook endpoints may not reach loopback, private, link-local or metadata addresses.", host, what))
}

// CodeURLNotPublic is the error code of a webhook URL whose host is not a public address.
const CodeURLNotPublic = "url_not_public"

// Check refuses a URL whose host is an address that is not public or a name that is local by
// definition ("localhost" and its subdomains, RFC 6761). Other names are resolved and checked
// when sending.
func (d Destinations) Check(u *url.URL) error {
	if d.AllowPrivate {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return errDestinationNotPublic(host, "a loopback name")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !PublicAddress(a) {
			return errDestinationNotPublic(host, describeAddress(a))
		}
		return nil
	}
	if numericHost(host) {
		// 2130706433, 0x7f.1, 017700000001: not a dotted quad, but some resolvers read it
		// as an IPv4 address (inet_aton). No real host name is all digits.
		return errDestinationNotPublic(host, "a numeric address in a form that is not accepted")
	}
	return nil
}

// numericHost reports a host made of digits, dots and hexadecimal forms only (a top-level
// domain is never numeric).
func numericHost(h string) bool {
	last := h
	if i := strings.LastIndexByte(h, '.'); i >= 0 {
		last = h[i+1:]
	}
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		last = last[2:]
		for _, c := range last {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// PublicAddress reports whether a is an address a webhook may reach: not unspecified,
// loopback, private (RFC 1918, fc00::/7 unique-local, which holds fd00:ec2::254), link-local
// (169.254.0.0/16 with the cloud metadata address 169.254.169.254, fe80::/10), multicast,
// carrier-grade NAT (100.64.0.0/10), documentation, benchmarking or otherwise reserved. An
// IPv4 address embedded in an IPv6 one (mapped, NAT64, 6to4) is judged as itself.
func PublicAddress(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		if v4, ok := embeddedIPv4(a); ok {
			return PublicAddress(v4)
		}
	}
	if !a.IsValid() || a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return false
	}
	for _, p := range reservedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// embeddedIPv4 returns the IPv4 address carried by a NAT64 (64:ff9b::/96) or 6to4
// (2002::/16) address.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT (and 100.100.100.200, a metadata address)
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments (192.0.0.192, a metadata address)
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"), // 6to4 relay anycast
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, and 255.255.255.255
	netip.MustParsePrefix("::/96"),       // IPv4-compatible (deprecated): ::127.0.0.1
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/23"), // IETF protocol assignments (Teredo, ORCHID…)
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("3fff::/20"),
	netip.MustParsePrefix("5f00::/16"),
}

// describeAddress names the class of a refused address for the error message.
func describeAddress(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a == metadataV4 || a == metadataV6:
		return "a cloud metadata address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return "a reserved address"
}

var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
)
