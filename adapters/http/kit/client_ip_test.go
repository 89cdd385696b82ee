package kit

import (
	"net/http/httptest"
	"testing"
)

func TestClientIP(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	none, _ := ParseTrustedProxies("")
	for _, c := range []struct {
		name   string
		ips    ClientIP
		remote string
		xff    []string
		want   string
	}{
		{"no proxy trusted: the peer, whatever the header says", none, "127.0.0.1:5000", []string{"203.0.113.9"}, "127.0.0.1"},
		{"untrusted peer: its own address", trusted, "198.51.100.7:5000", []string{"203.0.113.9"}, "198.51.100.7"},
		{"trusted proxy: the hop it appended", trusted, "127.0.0.1:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"a client-written entry left of the proxy's is ignored", trusted, "127.0.0.1:5000", []string{"1.2.3.4, 203.0.113.9"}, "203.0.113.9"},
		{"a chain of trusted proxies is skipped", trusted, "10.1.2.3:5000", []string{"203.0.113.9, 10.9.9.9", "10.0.0.1"}, "203.0.113.9"},
		{"trusted proxy without the header: the proxy", trusted, "127.0.0.1:5000", nil, "127.0.0.1"},
		{"a malformed hop stops the walk", trusted, "127.0.0.1:5000", []string{"203.0.113.9, garbage"}, "127.0.0.1"},
		{"IPv6 peer and hop", mustProxies(t, "::1"), "[::1]:5000", []string{"2001:db8::5"}, "2001:db8::5"},
		// Load balancers that write the client's port too (issue: every client was the proxy).
		{"ip:port hop", trusted, "127.0.0.1:5000", []string{"203.0.113.9:41000"}, "203.0.113.9"},
		{"[v6]:port hop", trusted, "127.0.0.1:5000", []string{"[2001:db8::5]:41000"}, "2001:db8::5"},
		{"[v6] hop without port", trusted, "127.0.0.1:5000", []string{"[2001:db8::5]"}, "2001:db8::5"},
		{"a trusted ip:port hop is skipped", trusted, "127.0.0.1:5000", []string{"203.0.113.9:1, 10.0.0.7:80"}, "203.0.113.9"},
		{"IPv4-mapped hop", trusted, "127.0.0.1:5000", []string{"[::ffff:203.0.113.9]:41000"}, "203.0.113.9"},
		{"a host name is malformed", trusted, "127.0.0.1:5000", []string{"client.example:80"}, "127.0.0.1"},
	} {
		r := httptest.NewRequest("POST", "/api/v1/session", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := c.ips.Of(r); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name      string
		forwarded []string
		xff       string
		want      string
	}{
		{"for= address", []string{"for=203.0.113.9"}, "", "203.0.113.9"},
		{"quoted ip:port", []string{`for="203.0.113.9:41000";proto=https`}, "", "203.0.113.9"},
		{"quoted [v6]:port", []string{`for="[2001:db8::5]:41000"`}, "", "2001:db8::5"},
		{"obfuscated port", []string{`for="203.0.113.9:_a1"`}, "", "203.0.113.9"},
		{"parameters in any order and case", []string{`proto=http;By=10.0.0.1;FOR=203.0.113.9`}, "", "203.0.113.9"},
		{"chain: the client's own entry is ignored", []string{"for=1.2.3.4, for=203.0.113.9", "for=10.0.0.1"}, "", "203.0.113.9"},
		{"a comma inside quotes", []string{`for=203.0.113.9;x="a,b"`}, "", "203.0.113.9"},
		{"unknown stops the walk", []string{"for=203.0.113.9, for=unknown"}, "", "127.0.0.1"},
		{"an element without for= stops the walk", []string{"for=203.0.113.9, proto=https"}, "", "127.0.0.1"},
		{"X-Forwarded-For is not read when Forwarded is", nil, "198.51.100.1", "127.0.0.1"},
	} {
		ips, err := mustProxies(t, "10.0.0.0/8, 127.0.0.1").WithHeader("forwarded")
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", "/api/v1/session", nil)
		r.RemoteAddr = "127.0.0.1:5000"
		for _, v := range c.forwarded {
			r.Header.Add("Forwarded", v)
		}
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := ips.Of(r); got != c.want {
			t.Errorf("Forwarded, %s: %s, want %s", c.name, got, c.want)
		}
	}
	if _, err := (ClientIP{}).WithHeader("X-Real-IP"); err == nil {
		t.Error("an unknown forwarding header was accepted")
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8, proxy.example"); err == nil {
		t.Error("a host name was accepted as a trusted proxy")
	}
}

func mustProxies(t *testing.T, s string) ClientIP {
	t.Helper()
	c, err := ParseTrustedProxies(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
