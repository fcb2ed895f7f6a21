package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// firstAttempt returns a rule that applies f to every key's first attempt only.
func firstAttempt(f receiver.Fault) func(string, int) (receiver.Fault, bool) {
	return func(_ string, n int) (receiver.Fault, bool) { return f, n == 1 }
}

// TestLostAnswerRetrySameKeyOneEffect: the receiver acts and then the answer is lost (dropped
// connection; a 404 page from Apps Script; a client timeout). The retry carries the same key
// and byte-identical body, and the receiver acts exactly once.
//
// The timeout case runs on a fake clock (in-memory transport, testing/synctest), so no load on
// the machine can make the retry miss its deadline: the first attempt's answer takes 5s, the
// client gives up after 1s, the retry goes out 0.5s later and is answered at once, while the
// first attempt is still on its way to acting (at 5s).
func TestLostAnswerRetrySameKeyOneEffect(t *testing.T) {
	cases := []struct {
		name      string
		preset    string
		fault     receiver.Fault
		tmo       time.Duration
		fakeClock bool
	}{
		{"drop-after-act", "rest", receiver.Fault{Mode: receiver.DropAfterAct}, 0, false},
		{"404-after-act", "apps-script", receiver.Fault{Mode: receiver.NotFoundAfterAct}, 0, false},
		{"timeout", "rest", receiver.Fault{Latency: 5 * time.Second}, time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, dedupe := range []bool{true, false} {
				check := func(t *testing.T) {
					rcv := receiver.New()
					rcv.NoDedupe = !dedupe
					rcv.Rule = firstAttempt(tc.fault)
					var c *replay.Client
					var base string
					var wait func() // until every request the receiver got has acted
					if tc.fakeClock {
						base = memURL
						c = memClient(rcv, &replay.Source{Name: "crm", Preset: tc.preset, URLPrefixes: []string{base + "/"}, Timeout: tc.tmo})
						wait = func() { time.Sleep(time.Minute) }
					} else {
						srv := serve(t, rcv)
						base = srv.URL
						c = fastClient(&replay.Source{Name: "crm", Preset: tc.preset, URLPrefixes: []string{base + "/"}, Timeout: tc.tmo})
						wait = srv.Close // waits for the handlers to finish
					}
					body := []byte(`{"b": 1,  "c":"x"}`)
					start := time.Now()
					res := c.Do(context.Background(), replay.Call{Key: "key-1", Source: "crm", URL: base + "/hook", Body: body})
					took := time.Since(start)
					wait()
					if !res.Outcome.Success() {
						t.Fatalf("outcome %v (%s), want delivered/duplicate", res.Outcome, res.Detail)
					}
					if len(res.Attempts) != 2 || res.Attempts[0].Outcome != replay.Retryable {
						t.Fatalf("attempts %+v, want a retryable first attempt and a second", res.Attempts)
					}
					if tc.fakeClock {
						// Timed out at 1s, waited 0.5s (half of the 1s band), answered at once.
						if took != 1500*time.Millisecond || !strings.Contains(res.Attempts[0].Err, "timeout") {
							t.Errorf("took %v with first attempt %+v, want a timeout at 1s and the retry at 1.5s", took, res.Attempts[0])
						}
						if res.Outcome != replay.Delivered {
							t.Errorf("outcome %v: the retry should have acted first (the first attempt was still sleeping)", res.Outcome)
						}
					}
					got := attemptsByKey(rcv)
					if len(got) != 1 || len(got["key-1"]) != 2 {
						t.Fatalf("receiver saw %v", got)
					}
					for _, a := range got["key-1"] {
						if !bytes.Equal(a.Body, body) {
							t.Errorf("attempt body %q, want %q", a.Body, body)
						}
					}
					eff := rcv.Effects()["key-1"]
					if dedupe && eff != 1 {
						t.Fatalf("effects %d, want exactly 1", eff)
					}
					// Without the receiver's dedupe, the same run acts twice: the first attempt
					// really did act, even though its answer was lost, so the check above can fail.
					if !dedupe && eff != 2 {
						t.Fatalf("without dedupe: effects %d, want 2 (first attempt must have acted)", eff)
					}
				}
				t.Run(fmt.Sprint("dedupe=", dedupe), func(t *testing.T) {
					if tc.fakeClock {
						synctest.Test(t, check)
					} else {
						check(t)
					}
				})
			}
		})
	}
}

func TestAppsScriptHopGETWithoutBodyOrSecrets(t *testing.T) {
	rcv := receiver.New()
	rcv.BodyKeyField = "id"
	rcv.Default = receiver.Fault{Mode: receiver.RedirectAfterAct}
	srv := serve(t, rcv)
	src := &replay.Source{Name: "form", Preset: "apps-script",
		URLPrefixes:      []string{srv.URL + "/macros/s/"},
		RedirectPrefixes: []string{srv.URL + "/echo/"},
		Key:              []replay.KeySpec{{In: "body", Name: "id"}},
		Headers:          map[string]string{"Authorization": "env:FORM_SECRET", "X-Custom": "literal"}}
	c := fastClient(src)
	c.Getenv = func(k string) string {
		if k == "FORM_SECRET" {
			return "Bearer s3cret"
		}
		return ""
	}
	res := c.Do(context.Background(), replay.Call{Key: "sub-1", Source: "form", URL: srv.URL + "/macros/s/AKfy/exec", Body: []byte(`{"name":"Ann"}`)})
	if res.Outcome != replay.Delivered || len(res.Attempts) != 1 {
		t.Fatalf("result %+v", res)
	}
	at := rcv.Attempts()
	if len(at) != 2 {
		t.Fatalf("receiver saw %d requests, want POST + echo GET", len(at))
	}
	post, get := at[0], at[1]
	if post.Method != "POST" || string(post.Body) != `{"id":"sub-1","name":"Ann"}` || post.Headers.Get("Authorization") != "Bearer s3cret" || post.Headers.Get("X-Custom") != "literal" {
		t.Errorf("POST %s %q auth %q", post.Method, post.Body, post.Headers.Get("Authorization"))
	}
	if !get.Echo || get.Method != "GET" || len(get.Body) != 0 {
		t.Errorf("hop %+v, want GET to the echo without a body", get)
	}
	for _, h := range []string{"Authorization", "X-Custom", "Idempotency-Key", "Content-Type"} {
		if get.Headers.Get(h) != "" {
			t.Errorf("hop carried %s: %q", h, get.Headers.Get(h))
		}
	}
	if n := rcv.Effects()["sub-1"]; n != 1 || len(rcv.Effects()) != 1 {
		t.Errorf("effects %v", rcv.Effects())
	}
	// Replaying again: the script dedupes; the echo says duplicate.
	res = c.Do(context.Background(), replay.Call{Key: "sub-1", Source: "form", URL: srv.URL + "/macros/s/AKfy/exec", Body: []byte(`{"name":"Ann"}`)})
	if res.Outcome != replay.Duplicate || rcv.Effects()["sub-1"] != 1 {
		t.Errorf("replay again: %v, effects %v", res.Outcome, rcv.Effects())
	}
}

func TestAppsScriptAnswers(t *testing.T) {
	cases := []struct {
		fault receiver.Fault
		want  replay.Outcome
	}{
		{receiver.Fault{Mode: receiver.Reject}, replay.Rejected},
		{receiver.Fault{Mode: receiver.OK}, replay.Delivered},
		{receiver.Fault{Mode: receiver.NotFoundAfterAct}, replay.Retryable},
		{receiver.Fault{Mode: receiver.Unauthorized}, replay.Systemic},
	}
	for _, tc := range cases {
		rcv := receiver.New()
		rcv.Default = tc.fault
		srv := serve(t, rcv)
		src := &replay.Source{Name: "form", Preset: "apps-script", URLPrefixes: []string{srv.URL + "/"}, MaxAttempts: 1}
		res := fastClient(src).Do(context.Background(), replay.Call{Key: "k", Source: "form", URL: srv.URL + "/exec", Body: []byte(`{}`)})
		if res.Outcome != tc.want {
			t.Errorf("%v: outcome %v (%s), want %v", tc.fault.Mode, res.Outcome, res.Detail, tc.want)
		}
	}
}

func TestRedirectsNotFollowed(t *testing.T) {
	elsewhere := receiver.New()
	other := serve(t, elsewhere)
	cases := []struct {
		name, preset string
		fault        receiver.Fault
		echoBase     string
		wantIn       string
	}{
		{"rest 301", "rest", receiver.Fault{Mode: receiver.Moved, Location: other.URL + "/new"}, "", other.URL + "/new"},
		{"rest 302", "rest", receiver.Fault{Mode: receiver.Moved, Status: 302, Location: other.URL + "/new"}, "", "update url"},
		{"rest 307", "rest", receiver.Fault{Mode: receiver.Moved, Status: 307, Location: other.URL + "/new"}, "", other.URL + "/new"},
		{"apps-script 302 outside redirect_prefixes", "apps-script", receiver.Fault{Mode: receiver.RedirectAfterAct}, other.URL, other.URL + "/echo/"},
		{"apps-script 301", "apps-script", receiver.Fault{Mode: receiver.Moved, Location: other.URL + "/x"}, "", other.URL + "/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rcv := receiver.New()
			rcv.Default = tc.fault
			rcv.EchoBase = tc.echoBase
			srv := serve(t, rcv)
			src := &replay.Source{Name: "crm", Preset: tc.preset, URLPrefixes: []string{srv.URL + "/"}, RedirectPrefixes: []string{srv.URL + "/echo/"},
				Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}}
			c := fastClient(src)
			c.Getenv = func(string) string { return "secret" }
			res := c.Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: srv.URL + "/hook", Body: []byte(`{}`)})
			if res.Outcome != replay.Systemic || !strings.Contains(res.Detail, tc.wantIn) {
				t.Fatalf("outcome %v detail %q; want systemic naming %q", res.Outcome, res.Detail, tc.wantIn)
			}
			if len(rcv.Attempts()) != 1 {
				t.Errorf("receiver saw %d requests, want 1", len(rcv.Attempts()))
			}
			if n := len(elsewhere.Attempts()); n != 0 {
				t.Errorf("the redirect target was contacted %d times", n)
			}
		})
	}
}

func TestDisallowedURLNeverContacted(t *testing.T) {
	rcv := receiver.New()
	srv := serve(t, rcv)
	for _, src := range []*replay.Source{
		{Name: "crm", URLPrefixes: []string{"https://crm.example.com/"}},
		{Name: "crm"}, // no prefixes at all
	} {
		res := fastClient(src).Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: srv.URL + "/hook", Body: []byte(`{}`)})
		if res.Outcome != replay.Refused || !strings.Contains(res.Detail, "crm") {
			t.Errorf("outcome %v %q, want refused naming the source", res.Outcome, res.Detail)
		}
	}
	res := fastClient().Do(context.Background(), replay.Call{Key: "k", Source: "nope", URL: srv.URL + "/hook"})
	if res.Outcome != replay.Refused || !strings.Contains(res.Detail, "nope") {
		t.Errorf("unknown source: %v %q", res.Outcome, res.Detail)
	}
	if n := len(rcv.Attempts()); n != 0 {
		t.Fatalf("receiver contacted %d times", n)
	}
}

func TestSecretsFromEnvAtSendTime(t *testing.T) {
	rcv := receiver.New()
	rcv.Default = receiver.Fault{Mode: receiver.Unauthorized}
	srv := serve(t, rcv)
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}}
	c := fastClient(src)
	env := ""
	c.Getenv = func(k string) string {
		if k == "CRM_TOKEN" {
			return env
		}
		return ""
	}
	res := c.Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: srv.URL + "/x", Body: []byte(`{}`)})
	if res.Outcome != replay.Systemic || !strings.Contains(res.Detail, "CRM_TOKEN") || len(res.Attempts) != 0 || len(rcv.Attempts()) != 0 {
		t.Fatalf("unset secret: %v %q attempts %d, receiver %d", res.Outcome, res.Detail, len(res.Attempts), len(rcv.Attempts()))
	}
	env = "Bearer xyz"
	res = c.Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: srv.URL + "/x", Body: []byte(`{}`)})
	if res.Outcome != replay.Systemic || res.Detail != "401 from crm: check the CRM_TOKEN secret" {
		t.Fatalf("401: %v %q", res.Outcome, res.Detail)
	}
	if got := rcv.Attempts()[0].Headers.Get("Authorization"); got != "Bearer xyz" {
		t.Errorf("Authorization %q", got)
	}
	if strings.Contains(res.Detail, "xyz") {
		t.Error("detail leaks the secret")
	}
}

func TestIdempotentReplayedAnd419AreDuplicates(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	c := fastClient(src)
	call := replay.Call{Key: "k", Source: "crm", URL: srv.URL + "/x", Body: []byte(`{}`)}
	if r := c.Do(context.Background(), call); r.Outcome != replay.Delivered {
		t.Fatalf("first: %v", r.Outcome)
	}
	if r := c.Do(context.Background(), call); r.Outcome != replay.Duplicate {
		t.Fatalf("second: %v", r.Outcome)
	}
	rcv.Default = receiver.Fault{Mode: receiver.Status, Status: 419}
	if r := c.Do(context.Background(), call); r.Outcome != replay.Duplicate {
		t.Fatalf("419: %v", r.Outcome)
	}
	if r := c.Do(context.Background(), replay.Call{Key: "k", Source: "crm", Method: "get request", URL: srv.URL + "/x"}); r.Outcome != replay.Refused {
		t.Fatalf("bad method: %v", r.Outcome)
	}
	_ = http.MethodPost
}
