package kit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP finds the address a request came from, for limits per client address (dashboard
// sign-in throttling, failed authentication). Behind a reverse proxy every connection comes
// from the proxy, so the connection's peer is taken as the client unless it is one of the
// trusted proxies; then the forwarding header the proxies write is read from the right,
// skipping trusted proxies, and the first address that is not one is the client. Entries a
// client wrote itself (left of what the proxies appended) are never believed.
//
// The header is the one the proxies are configured to write, X-Forwarded-For by default or
// RFC 7239 Forwarded: only that one is read, because a proxy passes the other one on as the
// client sent it. An entry may be a bare address or carry a port, as some load balancers
// write it: "203.0.113.9:41000", "[2001:db8::5]:41000" (and in Forwarded, for="[2001:db8::5]:41000").
type ClientIP struct {
	trusted   []netip.Prefix
	forwarded bool // read RFC 7239 Forwarded instead of X-Forwarded-For
}

// Forwarding headers a trusted proxy may write (KASSA_TRUSTED_PROXY_HEADER).
const (
	HeaderXForwardedFor = "X-Forwarded-For"
	HeaderForwarded     = "Forwarded"
)

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR prefixes
// (e.g. "10.0.0.0/8, 127.0.0.1"); empty trusts no proxy. Their X-Forwarded-For is read.
func ParseTrustedProxies(list string) (ClientIP, error) {
	var c ClientIP
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return ClientIP{}, fmt.Errorf("trusted proxy %q: not an address or CIDR prefix", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.trusted = append(c.trusted, p.Masked())
	}
	return c, nil
}

// WithHeader returns c reading the named forwarding header of trusted proxies: "" or
// X-Forwarded-For, or Forwarded (RFC 7239), case-insensitive.
func (c ClientIP) WithHeader(name string) (ClientIP, error) {
	switch {
	case name == "" || strings.EqualFold(name, HeaderXForwardedFor):
		c.forwarded = false
	case strings.EqualFold(name, HeaderForwarded):
		c.forwarded = true
	default:
		return ClientIP{}, fmt.Errorf("forwarding header %q: want %s or %s", name, HeaderXForwardedFor, HeaderForwarded)
	}
	return c, nil
}

func (c ClientIP) isTrusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Of returns the client address of r.
func (c ClientIP) Of(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !c.isTrusted(peer) {
		return host
	}
	hops := c.hops(r)
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := hops[i].addr, hops[i].ok
		if !ok {
			return host // a malformed or hidden hop: nothing left of it can be believed
		}
		if !c.isTrusted(a) {
			return a.Unmap().String()
		}
	}
	return host
}

// hop is one entry of a forwarding header; ok is false for an entry that names no address
// (malformed, or an obfuscated identifier or "unknown" in Forwarded).
type hop struct {
	addr netip.Addr
	ok   bool
}

// hops returns the entries of the configured forwarding header, left to right, every header
// line of it joined in order.
func (c ClientIP) hops(r *http.Request) []hop {
	name := HeaderXForwardedFor
	if c.forwarded {
		name = HeaderForwarded
	}
	lines := r.Header.Values(name)
	if len(lines) == 0 {
		return nil
	}
	var out []hop
	for _, e := range splitOutsideQuotes(strings.Join(lines, ","), ',') {
		var node string
		if c.forwarded {
			node = forwardedFor(e)
		} else {
			node = strings.TrimSpace(e)
		}
		a, ok := parseNode(node)
		out = append(out, hop{a, ok})
	}
	return out
}

// forwardedFor returns the node of the for= parameter of one Forwarded element
// (for=192.0.2.60;proto=http;by=203.0.113.43), unquoted; "" when it has none.
func forwardedFor(element string) string {
	for _, pair := range splitOutsideQuotes(element, ';') {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "for") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = strings.ReplaceAll(v[1:len(v)-1], `\`, "")
		}
		return v
	}
	return ""
}

// parseNode reads an address with or without a port: 203.0.113.9, 203.0.113.9:41000,
// 2001:db8::5, [2001:db8::5], [2001:db8::5]:41000.
func parseNode(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a, true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return a, true
		}
	}
	// A port that is not a number is allowed by RFC 7239 (an obfuscated port: "_abc").
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// splitOutsideQuotes splits s at sep where sep is not inside a quoted string.
func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case escaped:
			escaped = false
		case ch == '\\' && quoted:
			escaped = true
		case ch == '"':
			quoted = !quoted
		case ch == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
