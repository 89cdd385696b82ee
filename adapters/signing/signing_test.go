package signing

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The expected values were computed independently with Python's hmac module:
// hmac.new(secret.encode(), (t + ".").encode() + body, hashlib.sha256).hexdigest().
var vectors = []struct {
	secret string
	unix   int64
	body   string
	want   string
}{
	{"whsec_test", 1700000000, `{"id":"evt_1"}`, "c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"},
	{"whsec_0123456789abcdefghijABCDEFGHIJ0123456789", 1767225600, ``, "a84e65c1213945f92b5fd5cca92e375faca3389d0f39ad78c8cf6165a2e55fd9"},
}

func TestSignVectors(t *testing.T) {
	for _, v := range vectors {
		if got := Sign(v.secret, time.Unix(v.unix, 0), []byte(v.body)); got != v.want {
			t.Errorf("Sign(%q, %d, %q) = %s, want %s", v.secret, v.unix, v.body, got, v.want)
		}
	}
}

func TestHeaderOneV1PerSecret(t *testing.T) {
	at := time.Unix(1700000000, 0)
	body := []byte(`{"id":"evt_1"}`)
	got := Header(at, body, "whsec_test", "whsec_0123456789abcdefghijABCDEFGHIJ0123456789")
	want := "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925,v1=" +
		Sign("whsec_0123456789abcdefghijABCDEFGHIJ0123456789", at, body)
	if got != want {
		t.Fatalf("Header = %s\nwant     %s", got, want)
	}
	if one := Header(at, body, "whsec_test"); strings.Count(one, "v1=") != 1 {
		t.Fatalf("one secret, header %s", one)
	}
}

func TestBoxSealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	b, err := NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.Seal("whsec_abc", "we_1")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("whsec_abc")) || sealed[0] != versionAESGCM {
		t.Fatalf("secret not sealed: %q", sealed)
	}
	if got, err := b.Open(sealed, "we_1"); err != nil || got != "whsec_abc" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := b.Open(sealed, "we_2"); err != ErrSealed {
		t.Fatalf("moved to another endpoint: %v", err)
	}
	other, _ := NewBox(bytes.Repeat([]byte{8}, KeySize))
	if _, err := other.Open(sealed, "we_1"); err != ErrSealed {
		t.Fatalf("wrong key: %v", err)
	}
	clear, _ := NewBox(nil)
	if _, err := clear.Open(sealed, "we_1"); err != ErrSealed {
		t.Fatalf("clear box opened a sealed secret: %v", err)
	}
	// A clear row (written before a key was configured) stays readable by a keyed box.
	c, _ := clear.Seal("whsec_old", "we_1")
	if got, err := b.Open(c, "we_1"); err != nil || got != "whsec_old" {
		t.Fatalf("clear row under key: %q, %v", got, err)
	}
	if _, err := NewBox([]byte("short")); err == nil {
		t.Fatal("short key accepted")
	}
}

func TestParseKey(t *testing.T) {
	want := bytes.Repeat([]byte{0xab}, KeySize)
	for _, s := range []string{strings.Repeat("ab", KeySize), "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s"} {
		k, err := ParseKey(s)
		if err != nil || !bytes.Equal(k, want) {
			t.Errorf("ParseKey(%q) = %x, %v", s, k, err)
		}
	}
	if k, err := ParseKey(""); err != nil || k != nil {
		t.Errorf("empty: %v %v", k, err)
	}
	if _, err := ParseKey("tooshort"); err == nil {
		t.Error("short key accepted")
	}
}

// Rotation: a Box with the ring "new, old" opens what either sealed, seals under the new key,
// and Current tells which stored values still need re-sealing.
func TestBoxKeyRing(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	oldBox, _ := NewBox(oldKey)
	ring, err := NewBox(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	underOld, _ := oldBox.Seal("whsec_old", "we_1")
	if got, err := ring.Open(underOld, "we_1"); err != nil || got != "whsec_old" {
		t.Fatalf("ring opens a value sealed under the old key: %q, %v", got, err)
	}
	if ring.Current(underOld, "we_1") {
		t.Fatal("a value under the old key is reported current")
	}
	underNew, _ := ring.Seal("whsec_new", "we_1")
	if !ring.Current(underNew, "we_1") {
		t.Fatal("a value sealed by the ring is not current")
	}
	if _, err := oldBox.Open(underNew, "we_1"); err != ErrSealed {
		t.Fatal("the ring sealed under the old key")
	}
	newOnly, _ := NewBox(newKey)
	if got, err := newOnly.Open(underNew, "we_1"); err != nil || got != "whsec_new" {
		t.Fatalf("new key alone: %q, %v", got, err)
	}
	clearBox, _ := NewBox(nil)
	c, _ := clearBox.Seal("whsec_c", "we_1")
	if ring.Current(c, "we_1") {
		t.Fatal("a clear value is reported current")
	}
	if _, err := NewBox(nil, oldKey); err == nil {
		t.Fatal("older keys without a current one accepted")
	}
}

func TestParseKeysAndNewKey(t *testing.T) {
	a, b := NewKey(), NewKey()
	if a == b {
		t.Fatal("NewKey repeats")
	}
	ks, err := ParseKeys(a + ", " + b)
	if err != nil || len(ks) != 2 || len(ks[0]) != KeySize {
		t.Fatalf("ParseKeys: %d keys, %v", len(ks), err)
	}
	if ks, err := ParseKeys(" "); err != nil || ks != nil {
		t.Fatalf("empty: %v %v", ks, err)
	}
	if _, err := ParseKeys(a + ",,"); err == nil {
		t.Fatal("empty list item accepted")
	}
	if _, err := ParseKeys(a + ",short"); err == nil || !strings.Contains(err.Error(), "key 2") {
		t.Fatalf("bad second key: %v", err)
	}
}
