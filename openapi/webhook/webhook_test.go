package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"
)

// sign computes the D10 signature here, independently of the server's signing package.
func sign(secret string, ts int64, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.%s", ts, body)
	return hex.EncodeToString(m.Sum(nil))
}

const (
	secret = "whsec_2b0n4qEEXAMPLEsecretXXXXXXXXXXXXXXXXXX"
	body   = `{"id":"evt_123","object":"event","type":"checkout.session.completed","environment":"test","api_version":"2026-11-01","created":1767225600,"data":{"object":{"id":"cs_1"}}}`
	ts     = int64(1767225600)
)

var now = time.Unix(ts+30, 0)

func TestVerifyAccepts(t *testing.T) {
	h := fmt.Sprintf("t=%d,v1=%s", ts, sign(secret, ts, body))
	if err := Verify([]byte(body), h, secret, 0, now); err != nil {
		t.Fatal(err)
	}
	// Known vector computed with Python's hmac module for the same inputs as a cross-check of
	// the helper above.
	if got := sign("whsec_test", 1700000000, `{"id":"evt_1"}`); got != "c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925" {
		t.Fatalf("test helper disagrees with the reference vector: %s", got)
	}
}

func TestVerifyRotationAnyV1Matches(t *testing.T) {
	old := "whsec_oldoldoldoldoldoldoldoldoldoldoldold00"
	h := fmt.Sprintf("t=%d,v1=%s,v1=%s", ts, sign("whsec_new", ts, body), sign(old, ts, body))
	for _, s := range []string{"whsec_new", old} {
		if err := Verify([]byte(body), h, s, 0, now); err != nil {
			t.Errorf("secret %s: %v", s, err)
		}
	}
	if err := Verify([]byte(body), h, "whsec_other", 0, now); !errors.Is(err, ErrNoMatchingSignature) {
		t.Errorf("other secret: %v", err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	good := sign(secret, ts, body)
	cases := []struct {
		name, header, body, secret string
		now                        time.Time
		tol                        time.Duration
		want                       error
	}{
		{"empty header", "", body, secret, now, 0, ErrInvalidHeader},
		{"no timestamp", "v1=" + good, body, secret, now, 0, ErrInvalidHeader},
		{"bad timestamp", "t=abc,v1=" + good, body, secret, now, 0, ErrInvalidHeader},
		{"garbage element", fmt.Sprintf("t=%d,v1", ts), body, secret, now, 0, ErrInvalidHeader},
		{"bad hex", fmt.Sprintf("t=%d,v1=zz", ts), body, secret, now, 0, ErrInvalidHeader},
		{"no v1", fmt.Sprintf("t=%d,v0=%s", ts, good), body, secret, now, 0, ErrNoSignatures},
		{"tampered body", fmt.Sprintf("t=%d,v1=%s", ts, good), body + " ", secret, now, 0, ErrNoMatchingSignature},
		{"wrong secret", fmt.Sprintf("t=%d,v1=%s", ts, good), body, "whsec_x", now, 0, ErrNoMatchingSignature},
		{"timestamp changed", fmt.Sprintf("t=%d,v1=%s", ts+1, good), body, secret, now, 0, ErrNoMatchingSignature},
		{"too old (default 5 min)", fmt.Sprintf("t=%d,v1=%s", ts, good), body, secret, time.Unix(ts+301, 0), 0, ErrTimestampOutsideTolerance},
		{"too far ahead", fmt.Sprintf("t=%d,v1=%s", ts, good), body, secret, time.Unix(ts-301, 0), 0, ErrTimestampOutsideTolerance},
		{"custom tolerance", fmt.Sprintf("t=%d,v1=%s", ts, good), body, secret, time.Unix(ts+11, 0), 10 * time.Second, ErrTimestampOutsideTolerance},
	}
	for _, c := range cases {
		err := Verify([]byte(c.body), c.header, c.secret, c.tol, c.now)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		var typed *Error
		if !errors.As(err, &typed) {
			t.Errorf("%s: error %T is not *webhook.Error", c.name, err)
		}
	}
	// At the edge of the window, and with the check switched off.
	h := fmt.Sprintf("t=%d,v1=%s", ts, good)
	if err := Verify([]byte(body), h, secret, 0, time.Unix(ts+300, 0)); err != nil {
		t.Errorf("edge of tolerance: %v", err)
	}
	if err := Verify([]byte(body), h, secret, -1, time.Unix(ts+86400, 0)); err != nil {
		t.Errorf("negative tolerance: %v", err)
	}
}

func TestConstructEvent(t *testing.T) {
	h := fmt.Sprintf("t=%d,v1=%s", ts, sign(secret, ts, body))
	ev, err := ConstructEventAt([]byte(body), h, secret, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "evt_123" || ev.Object != "event" || ev.Type != "checkout.session.completed" ||
		ev.Environment != "test" || ev.APIVersion != APIVersion || ev.Created != ts ||
		string(ev.Data.Object) != `{"id":"cs_1"}` {
		t.Fatalf("decoded %+v", ev)
	}
	if _, err := ConstructEvent([]byte(body), h, secret); !errors.Is(err, ErrTimestampOutsideTolerance) {
		t.Fatalf("ConstructEvent uses the current time: %v", err)
	}
	bad := `{"hello":1}`
	hb := fmt.Sprintf("t=%d,v1=%s", ts, sign(secret, ts, bad))
	if _, err := ConstructEventAt([]byte(bad), hb, secret, 0, now); !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("not an envelope: %v", err)
	}
}
