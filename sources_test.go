package main

import (
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/config"
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
