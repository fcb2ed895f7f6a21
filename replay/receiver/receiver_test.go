package receiver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/replay/receiver"
)

func post(t *testing.T, c *http.Client, url, key, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return c.Do(req)
}

// TestDedupeUnderConcurrency: many simultaneous requests with one key act once, and OnEffect
// runs once. The first effect holds the dedupe lock until another request is in flight (or
// the test is over), so the check-then-act really is contended, however the goroutines of a
// loaded machine are scheduled.
func TestDedupeUnderConcurrency(t *testing.T) {
	rcv := receiver.New()
	var calls atomic.Int32
	rcv.OnEffect = func(key string, body []byte) {
		calls.Add(1)
		testbed.Until(t, func() bool { return rcv.InFlight() >= 2 })
	}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			resp, err := post(t, srv.Client(), srv.URL+"/x", "same", `{"a":1}`)
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if e := rcv.Effects(); e["same"] != 1 || len(e) != 1 || calls.Load() != 1 {
		t.Fatalf("effects %v, OnEffect calls %d", e, calls.Load())
	}
	if n := len(rcv.Attempts()); n != 40 {
		t.Errorf("%d attempts recorded", n)
	}
	if rcv.MaxConcurrent() < 2 {
		t.Errorf("peak concurrency %d", rcv.MaxConcurrent())
	}
	if !bytes.Equal(rcv.EffectBody("same"), []byte(`{"a":1}`)) {
		t.Errorf("effect body %q", rcv.EffectBody("same"))
	}
}

func TestModes(t *testing.T) {
	rcv := receiver.New()
	rcv.Rule = func(key string, n int) (receiver.Fault, bool) {
		switch key {
		case "drop":
			return receiver.Fault{Mode: receiver.DropAfterAct}, true
		case "404":
			return receiver.Fault{Mode: receiver.NotFoundAfterAct}, true
		case "302":
			return receiver.Fault{Mode: receiver.RedirectAfterAct}, true
		case "429":
			return receiver.Fault{Mode: receiver.TooManyRequests, RetryAfter: "7"}, true
		}
		return receiver.Fault{}, false
	}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	if _, err := post(t, c, srv.URL+"/x", "drop", "{}"); err == nil {
		t.Error("drop-after-act answered")
	}
	resp, err := post(t, c, srv.URL+"/x", "404", "{}")
	if err != nil || resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("404 mode: %v %v", resp, err)
	}
	resp, err = post(t, c, srv.URL+"/x", "302", "{}")
	if err != nil || resp.StatusCode != 302 {
		t.Fatalf("302 mode: %v %v", resp, err)
	}
	loc := resp.Header.Get("Location")
	// A client that keeps the POST on the redirect gets 405 (and, retrying, would act twice
	// on a receiver without dedupe).
	if r2, err := post(t, c, loc, "", ""); err != nil || r2.StatusCode != 405 {
		t.Errorf("POST to the echo: %v %v", r2, err)
	}
	r3, err := c.Get(loc)
	if err != nil || r3.StatusCode != 200 {
		t.Fatalf("GET echo: %v %v", r3, err)
	}
	b, _ := io.ReadAll(r3.Body)
	if strings.TrimSpace(string(b)) != `{"ok":true}` {
		t.Errorf("echo body %s", b)
	}
	resp, err = post(t, c, srv.URL+"/x", "429", "{}")
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("429 mode: %v %v", resp, err)
	}
	resp, err = post(t, c, srv.URL+"/x", "", "{}")
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("no key: %v %v", resp, err)
	}
	e := rcv.Effects()
	if e["drop"] != 1 || e["404"] != 1 || e["302"] != 1 || e["429"] != 0 || len(e) != 3 {
		t.Errorf("effects %v", e)
	}
}

func TestInMemoryTransport(t *testing.T) {
	rcv := receiver.New()
	rcv.Rule = func(key string, n int) (receiver.Fault, bool) {
		if key == "drop" {
			return receiver.Fault{Mode: receiver.DropAfterAct}, true
		}
		if key == "slow" {
			return receiver.Fault{Latency: 300 * time.Millisecond}, true
		}
		return receiver.Fault{}, false
	}
	c := &http.Client{Transport: receiver.Transport(rcv)}
	resp, err := post(t, c, "http://mem.test/x", "ok", `{"v":1}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ok: %v %v", resp, err)
	}
	if _, err := post(t, c, "http://mem.test/x", "drop", `{}`); !errors.Is(err, receiver.ErrDropped) {
		t.Errorf("drop: %v", err)
	}
	// A deadline gives up waiting while the handler runs on. On a fake clock, so a loaded
	// machine can't let the handler finish first.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://mem.test/x", strings.NewReader("{}"))
		req.Header.Set("Idempotency-Key", "slow")
		start := time.Now()
		if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 20*time.Millisecond {
			t.Errorf("slow: %v after %v", err, time.Since(start))
		}
		if n := rcv.Effects()["slow"]; n != 0 {
			t.Errorf("slow acted before its latency: %d", n)
		}
		time.Sleep(time.Second) // the handler runs on, and acts
		if n := rcv.Effects()["slow"]; n != 1 {
			t.Errorf("slow: %d effects after its latency, want 1", n)
		}
	})
}
