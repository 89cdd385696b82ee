package webhooks

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRetryScheduleIsD10(t *testing.T) {
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
		5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
	for i, d := range want {
		got, ok := RetryDelay(i+1, 0.5) // r = 0.5: no jitter
		if !ok || got != d {
			t.Errorf("retry after failed attempt %d = %v, %v; want %v", i+1, got, ok, d)
		}
	}
	if _, ok := RetryDelay(len(want)+1, 0.5); ok {
		t.Error("a retry after the tenth attempt")
	}
	if _, ok := RetryDelay(0, 0.5); ok {
		t.Error("a retry before any attempt")
	}
	if MaxAttempts != 10 {
		t.Errorf("MaxAttempts = %d", MaxAttempts)
	}
	var total time.Duration
	for _, d := range RetrySchedule {
		total += d
	}
	if total < 3*24*time.Hour || total > 3*24*time.Hour+4*time.Hour {
		t.Errorf("schedule spans %v, D10 says about 3 days", total)
	}
}

func TestJitterBounds(t *testing.T) {
	for i, base := range RetrySchedule {
		lo, hi := time.Duration(float64(base)*0.9), time.Duration(float64(base)*1.1)
		for _, r := range []float64{0, 0.0001, 0.25, 0.5, 0.75, 0.99999999} {
			d, _ := RetryDelay(i+1, r)
			if d < lo || d > hi {
				t.Errorf("retry %d, r=%v: %v outside [%v, %v]", i+1, r, d, lo, hi)
			}
		}
		if d, _ := RetryDelay(i+1, 0); d != lo {
			t.Errorf("r=0 gives %v, want the lower bound %v", d, lo)
		}
		for range 200 {
			d, _ := RetryDelay(i+1, DefaultRand())
			if d < lo || d > hi {
				t.Fatalf("random jitter %v outside [%v, %v]", d, lo, hi)
			}
		}
	}
}

func TestOutcomeRules(t *testing.T) {
	cases := []struct {
		o         Outcome
		ack, gone bool
	}{
		{Outcome{StatusCode: 200}, true, false},
		{Outcome{StatusCode: 204}, true, false},
		{Outcome{StatusCode: 299}, true, false},
		{Outcome{StatusCode: 301}, false, false},
		{Outcome{StatusCode: 302}, false, false},
		{Outcome{StatusCode: 400}, false, false},
		{Outcome{StatusCode: 410}, false, true},
		{Outcome{StatusCode: 500}, false, false},
		{Outcome{Err: "timeout"}, false, false},
		{Outcome{StatusCode: 200, Err: "body read failed"}, false, false},
	}
	for _, c := range cases {
		if c.o.Acknowledged() != c.ack || c.o.Gone() != c.gone {
			t.Errorf("%+v: ack %v gone %v", c.o, c.o.Acknowledged(), c.o.Gone())
		}
	}
}

func TestDecide(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	if n := decide(1, Outcome{StatusCode: 200}, now, false, 0.5); n.Status != DeliverySucceeded {
		t.Errorf("2xx: %+v", n)
	}
	n := decide(1, Outcome{StatusCode: 500}, now, false, 0.5)
	if n.Status != DeliveryPending || n.NextAttemptAt == nil || !n.NextAttemptAt.Equal(now.Add(5*time.Second)) {
		t.Errorf("first failure: %+v", n)
	}
	if n := decide(MaxAttempts, Outcome{StatusCode: 500}, now, false, 0.5); n.Status != DeliveryFailed {
		t.Errorf("last attempt: %+v", n)
	}
	if n := decide(2, Outcome{StatusCode: 410}, now, true, 0.5); n.Status != DeliveryDisabled {
		t.Errorf("endpoint disabled: %+v", n)
	}
	// A late acknowledgement still counts even if the endpoint was disabled meanwhile.
	if n := decide(2, Outcome{StatusCode: 200}, now, true, 0.5); n.Status != DeliverySucceeded {
		t.Errorf("ack on disabled endpoint: %+v", n)
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", ExcerptLimit) // 2 bytes each
	ex := Excerpt([]byte(long))
	if len(ex) > ExcerptLimit || !utf8.ValidString(ex) || len(ex) != ExcerptLimit {
		t.Errorf("excerpt of %d bytes, valid %v", len(ex), utf8.ValidString(ex))
	}
	ex = Excerpt([]byte("a" + strings.Repeat("é", ExcerptLimit)))
	if len(ex) != ExcerptLimit-1 || !utf8.ValidString(ex) {
		t.Errorf("cut rune kept: %d bytes", len(ex))
	}
	if got := Excerpt([]byte("ok\x00\xff")); got != "ok\uFFFD\uFFFD" {
		t.Errorf("sanitised: %q", got)
	}
}
