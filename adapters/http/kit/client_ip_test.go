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
