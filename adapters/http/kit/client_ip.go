package kit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP finds the address a request came from, for limits per client address (dashboard
// sign-in throttling). Behind a reverse proxy every connection comes from the proxy, so the
// connection's peer is taken as the client unless it is one of the trusted proxies; then
// X-Forwarded-For is read from the right, skipping trusted proxies, and the first address that
// is not one is the client. Entries a client wrote itself (left of what the proxies appended)
// are never believed.
type ClientIP struct {
	trusted []netip.Prefix
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR prefixes
// (e.g. "10.0.0.0/8, 127.0.0.1"); empty trusts no proxy.
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
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return host // a malformed hop: nothing left of it can be believed
		}
		if !c.isTrusted(a) {
			return a.Unmap().String()
		}
	}
	return host
}
