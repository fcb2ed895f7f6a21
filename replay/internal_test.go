package replay

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/backoff"
)

func TestBackoffScheduleProperty(t *testing.T) {
	cases := []struct{ base, cap time.Duration }{
		{time.Second, 30 * time.Second},
		{10 * time.Millisecond, 50 * time.Millisecond},
		{3 * time.Second, 5 * time.Second},
		{time.Hour, time.Minute}, // base beyond cap: every ceiling is the cap
	}
	for _, tc := range cases {
		r := rand.New(rand.NewPCG(1, uint64(tc.base)))
		c := &Client{Base: tc.base, Cap: tc.cap, Rand: r.Float64}
		for n := 1; n <= 12; n++ {
			ceil := time.Duration(math.Min(float64(tc.cap), float64(tc.base)*math.Pow(2, float64(n-1))))
			if got := backoff.Ceil(n, tc.base, tc.cap); got != ceil {
				t.Fatalf("base %v cap %v n %d: ceiling %v, want %v", tc.base, tc.cap, n, got, ceil)
			}
			const samples = 4000
			var sum float64
			lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
			distinct := map[time.Duration]bool{}
			for range samples {
				w := c.Backoff(n)
				if w < 0 || w > ceil {
					t.Fatalf("base %v cap %v n %d: wait %v outside [0, %v]", tc.base, tc.cap, n, w, ceil)
				}
				sum += float64(w)
				lo, hi = min(lo, w), max(hi, w)
				distinct[w] = true
			}
			// Full jitter: uniform over the whole band, not pinned to either end.
			mean := sum / samples / float64(ceil)
			if mean < 0.45 || mean > 0.55 {
				t.Errorf("base %v cap %v n %d: mean %.3f of the ceiling, want ~0.5", tc.base, tc.cap, n, mean)
			}
			if float64(lo) > 0.02*float64(ceil) || float64(hi) < 0.98*float64(ceil) {
				t.Errorf("base %v cap %v n %d: waits span [%v, %v] of a %v band", tc.base, tc.cap, n, lo, hi, ceil)
			}
			if len(distinct) < samples/2 {
				t.Errorf("base %v cap %v n %d: only %d distinct waits", tc.base, tc.cap, n, len(distinct))
			}
		}
	}
	// Degenerate random sources stay inside the band.
	for _, f := range []float64{0, 0.999999, 1, 7, -3, math.NaN()} {
		c := &Client{Base: time.Second, Cap: 30 * time.Second, Rand: func() float64 { return f }}
		if w := c.Backoff(3); w < 0 || w > 4*time.Second {
			t.Errorf("rand %v: wait %v outside [0, 4s]", f, w)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := now.Add(90 * time.Second)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"5", 5 * time.Second, true},
		{" 120 ", 120 * time.Second, true},
		{"0", 0, true},
		{at.Format(http.TimeFormat), 90 * time.Second, true},
		{at.Format(time.RFC850), 90 * time.Second, true},
		{at.Format(time.ANSIC), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{"", 0, false},
		{"99999999999999999999", 0, true},
	}
	for _, c := range cases {
		got, ok := parseRetryAfter(c.in, now)
		if ok != c.ok || (c.want != 0 && got != c.want) {
			t.Errorf("parseRetryAfter(%q) = %v %v, want %v %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if d, _ := parseRetryAfter("99999999999999999999", now); d < 1000*time.Hour {
		t.Errorf("huge delta parsed as %v", d)
	}
}

func TestAllowedComparesParsedURLs(t *testing.T) {
	pre := []string{"https://crm.example.com", "https://script.google.com/macros/s/", "http://127.0.0.1:8080/api"}
	yes := []string{
		"https://crm.example.com/",
		"https://crm.example.com/v1/orders?x=1",
		"https://CRM.Example.com:443/v1",
		"https://script.google.com/macros/s/AKfy/exec",
		"http://127.0.0.1:8080/api",
		"http://127.0.0.1:8080/api/x",
	}
	no := []string{
		"https://crm.example.com.evil.io/",
		"https://crm.example.com@evil.io/",
		"https://evil.io/https://crm.example.com/",
		"http://crm.example.com/",
		"https://crm.example.com:8443/",
		"https://script.google.com/macros/x/",
		"https://script.google.com/macros/s/../../admin",
		"https://script.google.com/macros/s/%2e%2e/admin",
		"http://127.0.0.1:8080/api2",
		"http://127.0.0.1:8081/api",
		"//crm.example.com/",
		"crm.example.com/x",
		"javascript:alert(1)",
		"",
	}
	for _, u := range yes {
		if ok, why := allowed(u, pre); !ok {
			t.Errorf("%q refused: %s", u, why)
		}
	}
	for _, u := range no {
		if ok, _ := allowed(u, pre); ok {
			t.Errorf("%q allowed", u)
		}
	}
	if ok, _ := allowed("https://crm.example.com/", nil); ok {
		t.Error("no prefixes allowed a URL")
	}
}

func TestWithBodyKeyKeepsEveryOtherByte(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"name":"Ann","msg":"hi"}`, `{"id":"k1","name":"Ann","msg":"hi"}`},
		{"  {\n  \"a\" : 1.50e0 }", "  {\"id\":\"k1\",\n  \"a\" : 1.50e0 }"},
		{`{}`, `{"id":"k1"}`},
		{`{ }`, `{"id":"k1" }`},
		{`{"id":"k1","a":1}`, `{"id":"k1","a":1}`},
	}
	for _, c := range cases {
		got, err := withBodyKey([]byte(c.in), "id", "k1")
		if err != nil || string(got) != c.want {
			t.Errorf("withBodyKey(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	n, err := withBodyKey([]byte(`{"id":42}`), "id", "42")
	if err != nil || string(n) != `{"id":42}` {
		t.Errorf("numeric id: %s %v", n, err)
	}
	for _, bad := range []string{`[1,2]`, `"x"`, `name=Ann`, ``, `{"id":"other"}`, `{"a":`} {
		if _, err := withBodyKey([]byte(bad), "id", "k1"); err == nil {
			t.Errorf("withBodyKey(%q) accepted", bad)
		}
	}
}

func TestOutcomeTable(t *testing.T) {
	rest := &Source{Name: "crm"}
	apps := &Source{Name: "form", Preset: "apps-script"}
	want := map[int][2]Outcome{ // rest, apps-script (2xx and 3xx of apps-script are decided elsewhere)
		200: {Delivered, Delivered}, 201: {Delivered, Delivered}, 204: {Delivered, Delivered},
		419: {Duplicate, Duplicate},
		301: {Systemic, Systemic}, 302: {Systemic, Systemic}, 307: {Systemic, Systemic},
		400: {Systemic, Systemic}, 401: {Systemic, Systemic}, 403: {Systemic, Systemic},
		404: {Systemic, Retryable}, 405: {Systemic, Systemic}, 422: {Systemic, Systemic},
		408: {Retryable, Retryable}, 409: {Retryable, Retryable}, 425: {Retryable, Retryable},
		429: {Retryable, Retryable}, 500: {Retryable, Retryable}, 502: {Retryable, Retryable},
		503: {Retryable, Retryable}, 504: {Retryable, Retryable},
		402: {Rejected, Rejected}, 410: {Rejected, Rejected}, 413: {Rejected, Rejected}, 451: {Rejected, Rejected},
	}
	for code, w := range want {
		if got := rest.classifyStatus(code); got != w[0] {
			t.Errorf("rest %d = %v, want %v", code, got, w[0])
		}
		if got := apps.classifyStatus(code); got != w[1] {
			t.Errorf("apps-script %d = %v, want %v", code, got, w[1])
		}
	}
	over := &Source{Name: "x", Overrides: map[string]Outcome{"404": Retryable, "timeout": Systemic, "410": Retryable}}
	if over.classifyStatus(404) != Retryable || over.classifyStatus(410) != Retryable || over.classifyFailure(true) != Systemic || over.classifyFailure(false) != Retryable {
		t.Error("overrides not applied")
	}
	for _, o := range []Outcome{Delivered, Duplicate, Rejected, Systemic, Retryable} {
		if p, err := ParseOutcome(strings.ToUpper(o.String())); err != nil || p != o {
			t.Errorf("ParseOutcome(%v) = %v %v", o, p, err)
		}
	}
}

func TestRedactNeverShowsValues(t *testing.T) {
	src := &Source{Name: "crm", Headers: map[string]string{"Authorization": "env:CRM_TOKEN", "X-Api-Key": "s3cret-literal", "X-Other": "env:UNSET_VAR"}}
	got := redact(src, func(k string) string {
		if k == "CRM_TOKEN" {
			return "Bearer topsecret"
		}
		return ""
	})
	joined := strings.Join(got, "\n")
	for _, w := range []string{"Authorization: env:CRM_TOKEN (set)", "X-Api-Key: (from config, hidden)", "X-Other: env:UNSET_VAR (not set)"} {
		if !strings.Contains(joined, w) {
			t.Errorf("redacted %q lacks %q", joined, w)
		}
	}
	if strings.Contains(joined, "topsecret") || strings.Contains(joined, "s3cret") {
		t.Errorf("redaction leaked a value: %q", joined)
	}
}
