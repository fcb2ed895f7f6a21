package config

import (
	"strings"
	"testing"
)

// TestCheckReportsWhatTheRuntimeRefuses: the problems `config check` used to pass and the
// runtime then refused are each reported, on their own line.
func TestCheckReportsWhatTheRuntimeRefuses(t *testing.T) {
	data := `[tabs.deadletter.columns]
key = "url"

[tabs.inbox.columns]
id = "Ref"
name = " ref "

[sources.crm]
url_prefixes = ["https://user:pw@crm.example.com/"]
redirect_prefixes = ["https://crm.example.com/a/..;/"]
key = "header:Idempotency Key"
[sources.crm.headers]
"Bad Header" = "x"
X-Api-Key = "abc\r\nX-Evil: 1"
X-Token = "env:MY TOKEN"

[sources.shop]
url_prefixes = ["https://shop.example.com/?x=1", "https://shop.example.com/#f", "https://shop.example.com/a/%2e%2e/"]
`
	_, probs := Parse([]byte(data))
	want := []struct {
		line int
		frag string
	}{
		{2, "url column's own header"},
		{5, `both mapped to the header "Ref"`},
		{9, "user info"},
		{10, "; in its path"},
		{11, "not a valid HTTP header name"},
		{13, "not a valid HTTP header name"},
		{14, `\r at position 4`},
		{15, "not an environment variable name"},
		{18, "query"},
		{18, "fragment"},
		{18, `encoded "."`},
	}
	for _, w := range want {
		if !hasProblem(probs, w.line, w.frag, true) {
			t.Errorf("no problem on line %d saying %q; got %v", w.line, w.frag, probs)
		}
	}
	if len(probs) != len(want) {
		t.Errorf("%d problems, want %d: %v", len(probs), len(want), probs)
	}
	for _, p := range probs {
		if strings.ContainsAny(p.Msg, "\r\n") {
			t.Errorf("a message carries a raw control: %q", p.Msg)
		}
	}
}

// TestCheckReadsValuesAsTheRuntimeDoes: what the runtime accepts (it trims and case-folds
// presets, outcome names, durations) is not a config check problem.
func TestCheckReadsValuesAsTheRuntimeDoes(t *testing.T) {
	data := `[sources.form]
preset = " Apps-Script "
url_prefixes = ["HTTPS://Script.Google.com:443/macros/s/"]
timeout = " 20s "
[sources.form.outcomes]
Timeout = "Retryable"
" 404" = "retryable"
[sources.form.headers]
Authorization = " env:FORM_TOKEN "
X-Static = "a\tb"

[tabs.deadletter.columns]
key = "url"
url = "endpoint"
`
	c, probs := Parse([]byte(data))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	s := c.Sources["form"]
	if s.PresetName() != "apps-script" || s.TimeoutDuration().String() != "20s" {
		t.Errorf("preset %q timeout %v", s.PresetName(), s.TimeoutDuration())
	}
	if ov := s.OutcomeOverrides(); ov["timeout"] != "retryable" || ov["404"] != "retryable" || len(ov) != 2 {
		t.Errorf("overrides %v", ov)
	}
	// The same override twice, spelled two ways, is refused: which one wins would be chance.
	_, probs = Parse([]byte("[sources.x]\nurl_prefixes = [\"https://x/\"]\n[sources.x.outcomes]\n\"404\" = \"retryable\"\n\" 404\" = \"rejected\"\n"))
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "same answer") || probs[0].Line != 4 {
		t.Errorf("duplicate override: %v", probs)
	}
}
