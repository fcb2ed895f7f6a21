package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
)

func TestSourceBuildFromConfig(t *testing.T) {
	cfg, probs := config.Parse([]byte(`
[sources.contact-form]
preset = "apps-script"
url_prefixes = ["https://script.google.com/macros/s/"]
key = "body:id"
rate_per_minute = 30
max_attempts = 2
timeout = "20s"
key_ttl = "24h"
concurrency = 3
[sources.contact-form.headers]
X-Api-Key = "env:FORM_KEY"

[sources.crm]
url_prefixes = ["https://crm.example.com/v1/"]
key = ["header:X-Request-Id", "body:event_id"]
[sources.crm.outcomes]
"404" = "retryable"
timeout = "systemic"
`))
	if len(probs) > 0 {
		t.Fatalf("config problems: %v", probs)
	}
	srcs, err := buildSources(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cf := srcs["contact-form"]
	if cf == nil || cf.Name != "contact-form" || cf.Preset != replay.PresetAppsScript {
		t.Fatalf("contact-form = %+v", cf)
	}
	if cf.Timeout != 20*time.Second || cf.KeyTTL != 24*time.Hour || cf.RatePerMinute != 30 || cf.MaxAttempts != 2 || cf.Concurrency != 3 {
		t.Errorf("contact-form numbers = %+v", cf)
	}
	if len(cf.Key) != 1 || cf.Key[0] != (replay.KeySpec{In: replay.KeyInBody, Name: "id"}) {
		t.Errorf("contact-form key = %+v", cf.Key)
	}
	if cf.Headers["X-Api-Key"] != "env:FORM_KEY" {
		t.Errorf("headers = %v", cf.Headers)
	}
	if err := cf.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	crm := srcs["crm"]
	if crm.Preset != replay.PresetREST {
		t.Errorf("crm preset %q, want rest by default", crm.Preset)
	}
	want := []replay.KeySpec{{In: replay.KeyInHeader, Name: "X-Request-Id"}, {In: replay.KeyInBody, Name: "event_id"}}
	if len(crm.Key) != 2 || crm.Key[0] != want[0] || crm.Key[1] != want[1] {
		t.Errorf("crm key = %+v", crm.Key)
	}
	if crm.Overrides["404"] != replay.Retryable || crm.Overrides[replay.OverrideTimeout] != replay.Systemic {
		t.Errorf("crm overrides = %v", crm.Overrides)
	}
}

func TestSourceDefaultsAndEmpty(t *testing.T) {
	srcs, err := buildSources(&config.Config{Sources: map[string]config.SourceSection{"a": {}}})
	if err != nil {
		t.Fatal(err)
	}
	a := srcs["a"]
	if len(a.Key) != 1 || a.Key[0] != (replay.KeySpec{In: replay.KeyInHeader, Name: "Idempotency-Key"}) {
		t.Errorf("default key = %+v", a.Key)
	}
	// No url_prefixes is not a build error: Plan refuses the rows, naming the source.
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "url_prefixes") {
		t.Errorf("validate = %v", err)
	}
	// Preset names are read case-insensitively.
	if s, err := buildSources(&config.Config{Sources: map[string]config.SourceSection{"f": {Preset: " Apps-Script "}}}); err != nil || s["f"].Preset != replay.PresetAppsScript {
		t.Errorf("preset not normalised: %v %v", s, err)
	}
	if s, err := buildSources(nil); err != nil || len(s) != 0 {
		t.Errorf("nil config: %v %v", s, err)
	}
}

func TestSourceBuildReportsEveryProblem(t *testing.T) {
	cfg := &config.Config{Sources: map[string]config.SourceSection{
		"a": {Preset: "soap", Timeout: "soon", Key: "cookie:x", Outcomes: map[string]string{"404": "meh", "999": "retryable"}},
		"b": {KeyTTL: "-1h", Headers: map[string]string{"Bad Header": "x", "Authorization": "env:"}, MaxAttempts: 50},
	}}
	_, err := buildSources(cfg)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"[sources.a]", "soap", "timeout", "cookie:x", "meh", "999", "[sources.b]", "key_ttl", "Bad Header", "env: without", "max_attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestSourceClientReadsSecretsThroughGetenv(t *testing.T) {
	src := &replay.Source{Name: "crm", Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}}
	c := newReplayClient(map[string]*replay.Source{"crm": src}, func(k string) string {
		if k == "CRM_TOKEN" {
			return "t0ken"
		}
		return ""
	})
	got := c.Redact(src)
	if len(got) != 1 || got[0] != "Authorization: env:CRM_TOKEN (set)" {
		t.Errorf("redact = %v", got)
	}
	if c.Sources["crm"] != src {
		t.Error("client lacks the sources")
	}
}

// probeHTTP returns an http.Client whose real transport (the one that refuses header names
// and values net/http can't send) connects every request, whatever its host, to a local
// server answering 200 {"ok":true}: plain http to one, https to a TLS one. It counts the
// requests that arrive.
func probeHTTP(t *testing.T) (*http.Client, *atomic.Int64) {
	n := &atomic.Int64{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})
	plain, tlsSrv := httptest.NewServer(h), httptest.NewTLSServer(h)
	t.Cleanup(plain.Close)
	t.Cleanup(tlsSrv.Close)
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", plain.Listener.Addr().String())
		},
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			td := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}}
			return td.DialContext(ctx, "tcp", tlsSrv.Listener.Addr().String())
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, n
}

// runtimeRefusal is what the runtime refuses of a config, asked without config check's own
// report: building the sources (buildSources), the replay side's checks of each source
// (replayRefusal), and the tab configs read by model.MapHeaders against the header row
// `triage init` writes for them (every field must be found in its own column). "" when the
// runtime accepts it all.
func runtimeRefusal(t *testing.T, cfg *config.Config) string {
	srcs, err := buildSources(cfg)
	if err != nil {
		return err.Error()
	}
	if why := replayRefusal(t, srcs); why != "" {
		return why
	}
	for _, tc := range cfg.TabConfigs() {
		var header []string
		var fields []model.Field
		for _, col := range model.SchemaFor(tc.Role).Columns {
			h := col.Header
			if o, ok := tc.Columns[col.Field]; ok && strings.TrimSpace(o) != "" {
				h = o
			}
			header, fields = append(header, h), append(fields, col.Field)
		}
		hm, err := model.MapHeaders(tc, header)
		if err != nil {
			return err.Error()
		}
		for i, f := range fields {
			if hm.Col(f) != i {
				return fmt.Sprintf("tab %s: field %s is not read from its own column %q", tc.Role, f, header[i])
			}
		}
	}
	return ""
}

// replayRefusal is what the replay package itself refuses of sources: replay.Source.Validate
// (which Plan and the client run for every row), then a call sent through the real client to
// a URL under the source's first prefix, with every env: secret set, which must go out.
func replayRefusal(t *testing.T, srcs map[string]*replay.Source) string {
	for _, name := range sortedNames(srcs) {
		src := srcs[name]
		if err := src.Validate(); err != nil {
			return err.Error()
		}
		hc, sent := probeHTTP(t)
		c := &replay.Client{Sources: srcs, HTTP: hc, Getenv: func(string) string { return "Bearer probe" }}
		u := src.URLPrefixes[0]
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		res := c.Do(context.Background(), replay.Call{Key: "probe-key", Source: name, URL: u + "probe", Body: []byte(`{"id":"probe-key"}`)})
		if !res.Outcome.Success() || sent.Load() == 0 {
			return fmt.Sprintf("source %s: the probe call was not sent: %v %s", name, res.Outcome, res.Detail)
		}
	}
	return ""
}

// looseSources converts source sections the way a runtime without the config validator
// would (no check at all), so replayRefusal can be asked on its own: the replay side must
// refuse the URL and header problems by itself, not only because buildSources asked config.
func looseSources(cfg *config.Config) map[string]*replay.Source {
	out := map[string]*replay.Source{}
	for name, sec := range cfg.Sources {
		src := &replay.Source{Name: name, Preset: sec.PresetName(), URLPrefixes: sec.URLPrefixes, RedirectPrefixes: sec.RedirectPrefixes, Headers: sec.Headers}
		if k, ok := sec.Key.(string); ok {
			in, n, _ := strings.Cut(k, ":")
			src.Key = []replay.KeySpec{{In: in, Name: n}}
		}
		out[name] = src
	}
	return out
}

func sortedNames(m map[string]*replay.Source) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestConfigCheckMatchesRuntime is invariant 12: for each config of the table, `config
// check` (config.Parse) reports a problem, with its line, exactly when the runtime refuses
// something of it (runtimeRefusal), and accepts exactly what the runtime accepts.
func TestConfigCheckMatchesRuntime(t *testing.T) {
	const crm = "[sources.crm]\nurl_prefixes = [\"https://crm.example.com/v1/\"]\n"
	cases := []struct {
		name, toml string
		bad        bool
	}{
		// Refused by both.
		{"header name with a space", crm + "[sources.crm.headers]\n\"Bad Header\" = \"x\"\n", true},
		{"header name with a colon", crm + "[sources.crm.headers]\n\"X:Y\" = \"x\"\n", true},
		{"header name non-ASCII", crm + "[sources.crm.headers]\n\"Schlüssel\" = \"x\"\n", true},
		{"CRLF in a literal header value", crm + "[sources.crm.headers]\nX-Api-Key = \"abc\\r\\nX-Evil: 1\"\n", true},
		{"control char in a literal header value", crm + "[sources.crm.headers]\nX-Api-Key = \"a\\u0001b\"\n", true},
		{"DEL in a literal header value", crm + "[sources.crm.headers]\nX-Api-Key = \"a\\u007fb\"\n", true},
		{"env: without a name", crm + "[sources.crm.headers]\nAuthorization = \"env:\"\n", true},
		{"env: with a space", crm + "[sources.crm.headers]\nAuthorization = \"env: TOKEN\"\n", true},
		{"key header name with a space", crm + "key = \"header:Idempotency Key\"\n", true},
		{"prefix with user info", "[sources.crm]\nurl_prefixes = [\"https://u@crm.example.com/\"]\n", true},
		{"prefix with user and password", "[sources.crm]\nurl_prefixes = [\"https://u:p@crm.example.com/\"]\n", true},
		{"prefix with a query", "[sources.crm]\nurl_prefixes = [\"https://crm.example.com/v1?x=1\"]\n", true},
		{"prefix with a fragment", "[sources.crm]\nurl_prefixes = [\"https://crm.example.com/v1#x\"]\n", true},
		{"prefix with an encoded dot", "[sources.crm]\nurl_prefixes = [\"https://crm.example.com/v1/%2e%2e/\"]\n", true},
		{"prefix with a dot segment", "[sources.crm]\nurl_prefixes = [\"https://crm.example.com/v1/../\"]\n", true},
		{"prefix with a backslash", "[sources.crm]\nurl_prefixes = [\"https://crm.example.com\\\\v1/\"]\n", true},
		{"prefix with a semicolon", "[sources.crm]\nurl_prefixes = [\"https://crm.example.com/v1;x/\"]\n", true},
		{"prefix not http", "[sources.crm]\nurl_prefixes = [\"ftp://crm.example.com/\"]\n", true},
		{"prefix without a host", "[sources.crm]\nurl_prefixes = [\"https:///v1/\"]\n", true},
		{"redirect prefix with user info", crm + "redirect_prefixes = [\"https://u@echo.example.com/\"]\n", true},
		{"redirect prefix with ..;", crm + "redirect_prefixes = [\"https://echo.example.com/a/..;/\"]\n", true},
		{"no url_prefixes", "[sources.crm]\npreset = \"rest\"\n", true},
		{"unknown preset", crm + "preset = \"soap\"\n", true},
		{"max_attempts too many", crm + "max_attempts = 50\n", true},
		{"timeout not a duration", crm + "timeout = \"soon\"\n", true},
		{"negative key_ttl", crm + "key_ttl = \"-1h\"\n", true},
		{"outcome override not a status", crm + "[sources.crm.outcomes]\n\"999\" = \"retryable\"\n", true},
		{"outcome name unknown", crm + "[sources.crm.outcomes]\n\"404\" = \"maybe\"\n", true},
		{"key column mapped onto url", "[tabs.deadletter.columns]\nkey = \"url\"\n", true},
		{"source column mapped onto payload", "[tabs.deadletter.columns]\nsource = \"Payload\"\n", true},
		{"two columns, one name", "[tabs.deadletter.columns]\nkey = \"ref\"\nerror = \"REF\"\n", true},
		{"id mapped onto status", "[tabs.queue.columns]\nid = \"status\"\n", true},
		{"blank column mapping", "[tabs.inbox.columns]\nid = \"  \"\n", true},
		// Accepted by both.
		{"the DESIGN example", `spreadsheet = "1AbC"
refresh = "60s"
[tabs.inbox]
name = "Inbox"
statuses = ["new", "read", "replied", "done", "spam"]
[tabs.inbox.columns]
id = "Submission ID"
[tabs.deadletter]
name = "failed_calls"
[tabs.queue]
name = "Jobs"
stale_after = "30m"
[sources.contact-form]
preset = "apps-script"
url_prefixes = ["https://script.google.com/macros/s/"]
key = "body:id"
redirect_prefixes = ["https://script.googleusercontent.com/"]
rate_per_minute = 30
max_attempts = 2
timeout = "20s"
[sources.contact-form.headers]
Authorization = "env:CRM_TOKEN"
`, false},
		{"preset spelled loosely", crm + "preset = \" Apps-Script \"\n", false},
		{"outcome names spelled loosely", crm + "[sources.crm.outcomes]\nTimeout = \"Retryable\"\n\" 404\" = \"rejected\"\n", false},
		{"durations with spaces", crm + "timeout = \" 20s \"\nkey_ttl = \"24h\"\n", false},
		{"a tab inside a header value", crm + "[sources.crm.headers]\nX-Static = \"a\\tb\"\n", false},
		{"a literal value ending in CRLF (trimmed when sent)", crm + "[sources.crm.headers]\nX-Static = \"abc\\r\\n\"\n", false},
		{"prefix with case and default port", "[sources.crm]\nurl_prefixes = [\"HTTPS://CRM.Example.com:443/v1/\"]\n", false},
		{"prefix on an IPv6 address", "[sources.crm]\nurl_prefixes = [\"http://[::1]:8080/api\"]\n", false},
		{"key column renamed and url moved away", "[tabs.deadletter.columns]\nkey = \"url\"\nurl = \"endpoint\"\n", false},
		{"payload mapped onto its own alias", "[tabs.deadletter.columns]\npayload = \"body\"\n", false},
		{"key in header and body", crm + "key = [\"header:X-Request-Id\", \"body:event_id\"]\n", false},
	}
	// The URL and header rules live in model and the replay side applies them itself.
	replaySide := func(name string) bool {
		for _, w := range []string{"header", "prefix", "env:", "url_prefixes"} {
			if strings.Contains(name, w) {
				return true
			}
		}
		return false
	}
	for _, tc := range cases {
		cfg, probs := config.Parse([]byte(tc.toml))
		for _, p := range probs {
			if p.Line == 0 {
				t.Errorf("%s: problem without a line: %s", tc.name, p.Msg)
			}
		}
		why := runtimeRefusal(t, cfg)
		if checked, refused := len(probs) > 0, why != ""; checked != tc.bad || refused != tc.bad {
			t.Errorf("%s: config check reports %v, runtime refuses %q; want both %v", tc.name, probs, why, tc.bad)
		}
		if tc.bad && replaySide(tc.name) || !tc.bad {
			if loose := replayRefusal(t, looseSources(cfg)); (loose != "") != tc.bad {
				t.Errorf("%s: the replay side alone refuses %q; want refused=%v", tc.name, loose, tc.bad)
			}
		}
	}
}

// TestConfigBoundsMatchReplay: the values config checks against are replay's own.
func TestConfigBoundsMatchReplay(t *testing.T) {
	if config.MaxSourceConcurrency != replay.MaxConcurrency {
		t.Errorf("config allows concurrency up to %d, replay %d", config.MaxSourceConcurrency, replay.MaxConcurrency)
	}
	for _, o := range config.Outcomes {
		if _, err := replay.ParseOutcome(o); err != nil {
			t.Errorf("config accepts outcome %q, replay doesn't: %v", o, err)
		}
	}
	for _, p := range config.Presets {
		if err := (&replay.Source{Name: "x", Preset: p, URLPrefixes: []string{"https://x/"}}).Validate(); err != nil {
			t.Errorf("config accepts preset %q, replay doesn't: %v", p, err)
		}
	}
}
