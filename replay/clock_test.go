package replay_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// memClient returns a client that reaches h in memory (fake clock friendly), with base 1s,
// cap 30s and jitter pinned at half the band.
func memClient(h http.Handler, sources ...*replay.Source) *replay.Client {
	c := fastClient(sources...)
	c.HTTP = &http.Client{Transport: receiver.Transport(h)}
	c.Base, c.Cap = time.Second, 30*time.Second
	c.Rand = func() float64 { return 0.5 }
	return c
}

const memURL = "http://receiver.test"

// downClient is memClient to a receiver that answers 503 to every attempt, for the crm
// source with maxAttempts.
func downClient(maxAttempts int) (*receiver.Receiver, *replay.Client) {
	rcv := receiver.New()
	rcv.Default = receiver.Fault{Mode: receiver.Unavailable}
	return rcv, memClient(rcv, &replay.Source{Name: "crm", URLPrefixes: []string{memURL}, MaxAttempts: maxAttempts})
}

// TestRetryAfterVariantsExactWaits: every form of Retry-After gives the exact wait on a fake
// clock; unusable values fall back to the jittered backoff; a value beyond the cap defers.
func TestRetryAfterVariantsExactWaits(t *testing.T) {
	const backoff1 = 500 * time.Millisecond // 0.5 · min(30s, 1s·2^0)
	date := func(d time.Duration, layout string) func() string {
		return func() string {
			s := time.Now().UTC().Add(d).Format(layout)
			return strings.Replace(s, "UTC", "GMT", 1)
		}
	}
	lit := func(s string) func() string { return func() string { return s } }
	cases := []struct {
		name     string
		value    func() string
		wait     time.Duration
		deferred bool
	}{
		{"seconds", lit("5"), 5 * time.Second, false},
		{"zero", lit("0"), 0, false},
		{"at the cap", lit("30"), 30 * time.Second, false},
		{"IMF-fixdate", date(7*time.Second, http.TimeFormat), 7 * time.Second, false},
		{"RFC 850", date(9*time.Second, time.RFC850), 9 * time.Second, false},
		{"asctime", date(11*time.Second, time.ANSIC), 11 * time.Second, false},
		{"past date", date(-time.Hour, http.TimeFormat), backoff1, false},
		{"negative", lit("-1"), backoff1, false},
		{"garbage", lit("soon, maybe"), backoff1, false},
		{"fraction", lit("2.5"), backoff1, false},
		{"just past the cap", lit("31"), 0, true},
		{"a day", lit("86400"), 0, true},
		{"date beyond the cap", date(time.Hour, http.TimeFormat), 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rcv := receiver.New()
				rcv.Rule = func(_ string, n int) (receiver.Fault, bool) {
					if n == 1 {
						return receiver.Fault{Mode: receiver.TooManyRequests, RetryAfter: tc.value()}, true
					}
					return receiver.Fault{}, false
				}
				src := &replay.Source{Name: "crm", URLPrefixes: []string{memURL}}
				c := memClient(rcv, src)
				start := time.Now()
				res := c.Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: memURL + "/x", Body: []byte(`{}`)})
				at := rcv.Attempts()
				if tc.deferred {
					if !res.Deferred || res.Outcome != replay.Retryable || len(at) != 1 || time.Since(start) != 0 {
						t.Fatalf("want deferred after one attempt at once; got %+v, %d requests, %v elapsed", res, len(at), time.Since(start))
					}
					if !strings.Contains(res.Detail, "deferred") {
						t.Errorf("detail %q", res.Detail)
					}
					return
				}
				if res.Outcome != replay.Delivered || len(at) != 2 {
					t.Fatalf("got %v after %d requests (%s)", res.Outcome, len(at), res.Detail)
				}
				if got := at[1].At.Sub(at[0].At); got != tc.wait {
					t.Errorf("waited %v, want exactly %v", got, tc.wait)
				}
				if res.Attempts[0].Wait != tc.wait {
					t.Errorf("Attempt.Wait %v, want %v", res.Attempts[0].Wait, tc.wait)
				}
			})
		})
	}
}

// TestBackoffWaitsOnFakeClock: without Retry-After the waits follow the full-jitter schedule,
// capped, and attempts stop at max_attempts.
func TestBackoffWaitsOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rcv, c := downClient(7)
		c.Base, c.Cap = time.Second, 10*time.Second
		c.Rand = func() float64 { return 0.75 }
		res := c.Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: memURL + "/x", Body: []byte(`{}`)})
		at := rcv.Attempts()
		if res.Outcome != replay.Retryable || len(at) != 7 || len(res.Attempts) != 7 {
			t.Fatalf("outcome %v, %d requests", res.Outcome, len(at))
		}
		want := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 6 * time.Second, 7500 * time.Millisecond, 7500 * time.Millisecond}
		for i, w := range want {
			if got := at[i+1].At.Sub(at[i].At); got != w {
				t.Errorf("wait after attempt %d: %v, want %v", i+1, got, w)
			}
		}
		if res.Attempts[6].Wait != 0 || !strings.Contains(res.Detail, "after 7 attempts") {
			t.Errorf("last attempt %+v, detail %q", res.Attempts[6], res.Detail)
		}
	})
}

// TestCancelDuringBackoffReturnsPromptly: a cancel while a row sleeps in backoff ends the run at
// once (fake time barely moves) and sends nothing more; the attempt made is written back.
func TestCancelDuringBackoffReturnsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rcv, c := downClient(5)
		c.Base, c.Cap = 20*time.Second, 60*time.Second
		c.Rand = func() float64 { return 0.99 }
		st := newMemStore(model.DefaultTabConfig(model.RoleDeadLetter), keyRows(3, "crm", memURL+"/x"))
		tab := st.table(t)
		ctx, cancel := context.WithCancel(context.Background())
		atCancel := make(chan int, 1)
		go func() {
			time.Sleep(3 * time.Second)
			atCancel <- len(rcv.Attempts())
			cancel()
		}()
		start := time.Now()
		sum := replay.Run(ctx, c, st, tab, records(tab), replay.RunOptions{Concurrency: 1})
		if el := time.Since(start); el != 3*time.Second {
			t.Errorf("run took %v of fake time after a cancel at 3s", el)
		}
		// Concurrency 1: rows 1 and 2 went out at once (the first sleeps without holding the
		// slot); both sleep ~19.8s before a retry, and the cancel comes at 3s.
		n0 := <-atCancel
		if n0 != 2 {
			t.Fatalf("%d requests before the cancel, want 2", n0)
		}
		if n := len(rcv.Attempts()); n != n0 {
			t.Errorf("%d requests, want %d (nothing after the cancel)", n, n0)
		}
		time.Sleep(time.Minute)
		if n := len(rcv.Attempts()); n != n0 {
			t.Errorf("%d requests a minute after the run returned", n)
		}
		if !sum.Cancelled || len(sum.NotAttempted) != 1 || sum.NotAttempted[0] != "k-2" || sum.Rows[0].Attempts != 1 || sum.Rows[0].State != "retryable" {
			t.Errorf("summary: cancelled %v, not attempted %v, row 0 %+v", sum.Cancelled, sum.NotAttempted, sum.Rows[0])
		}
		if got, _ := st.cell("k-0", model.FAttempts); got != "2" {
			t.Errorf("attempts cell %q, want 2 (1 before + 1 now)", got)
		}
		if got, _ := st.cell("k-0", model.FStatus); got != "dead" {
			t.Errorf("status %q, want dead", got)
		}
	})
}

// TestThrottledSourceLeavesOthersAtTheirRate: a 429 storm on one source (Retry-After) doesn't
// slow another source below its rate, and neither exceeds its own.
func TestThrottledSourceLeavesOthersAtTheirRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rcv := receiver.New()
		rcv.Rule = func(key string, n int) (receiver.Fault, bool) {
			if strings.HasPrefix(key, "a-") && n <= 3 {
				return receiver.Fault{Mode: receiver.TooManyRequests, RetryAfter: "20"}, true
			}
			return receiver.Fault{}, false
		}
		a := &replay.Source{Name: "a", URLPrefixes: []string{memURL + "/a"}, RatePerMinute: 60, MaxAttempts: 4}
		b := &replay.Source{Name: "b", URLPrefixes: []string{memURL + "/b"}, RatePerMinute: 120}
		c := memClient(rcv, a, b)
		var rows []row
		for i := range 20 {
			rows = append(rows, row{source: "a", url: memURL + "/a", payload: payload(i), key: "a-" + string(rune('a'+i)), status: "dead"})
			rows = append(rows, row{source: "b", url: memURL + "/b", payload: payload(i), key: "b-" + string(rune('a'+i)), status: "dead"})
		}
		st := newMemStore(model.DefaultTabConfig(model.RoleDeadLetter), rows)
		tab := st.table(t)
		sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 3})
		if sum.Halted != nil || sum.Counts["delivered"] != 40 {
			t.Fatalf("summary %+v halted %v", sum.Counts, sum.Halted)
		}
		var ta, tb []time.Time
		for _, at := range rcv.Attempts() {
			if strings.HasPrefix(at.Key, "a-") {
				ta = append(ta, at.At)
			} else {
				tb = append(tb, at.At)
			}
		}
		if len(tb) != 20 || len(ta) != 80 {
			t.Fatalf("requests: a %d b %d", len(ta), len(tb))
		}
		// b: 120/min with burst 1 = one request every 500ms from the start, untouched by a.
		if span := tb[19].Sub(tb[0]); span != 19*500*time.Millisecond {
			t.Errorf("b's 20 requests took %v, want 9.5s (its own rate)", span)
		}
		for i := 1; i < len(tb); i++ {
			if d := tb[i].Sub(tb[i-1]); d < 500*time.Millisecond {
				t.Errorf("b went faster than its rate: gap %v", d)
			}
		}
		for i := 1; i < len(ta); i++ {
			if d := ta[i].Sub(ta[i-1]); d < time.Second {
				t.Errorf("a went faster than its rate: gap %v", d)
			}
		}
	})
}
