package config

import (
	"strings"
	"testing"
	"time"
)

// TestNotifyProblemsHaveTheirLines: every [notify] problem is reported on its line, and no
// message quotes the webhook URL's path (its token).
func TestNotifyProblemsHaveTheirLines(t *testing.T) {
	data := `spreadsheet = "x"

[notify]
url = "https://hooks.evil.example/services/T0/B0/SECRETTOKEN"
url_prefixes = ["https://hooks.slack.com/services/", "http://hooks.example.com/", "ftp://x/"]
timeout = "2h"
`
	_, probs := Parse([]byte(data))
	want := []lineProblem{
		{4, "not under any of the 3 [notify] url_prefixes"},
		{5, "use https (plain http is accepted only to a loopback address)"},
		{5, `scheme "ftp"`},
		{6, "not a duration from 1s to 1m0s"},
	}
	wantProblems(t, probs, true, want...)
	for _, p := range probs {
		if strings.Contains(p.Msg, "SECRETTOKEN") {
			t.Errorf("a problem quotes the webhook's token: %s", p.Msg)
		}
	}
}

func TestNotifyAccepted(t *testing.T) {
	for _, data := range []string{
		"[notify]\nurl = \"env:TRIAGE_NOTIFY_URL\"\nurl_prefixes = [\"https://hooks.slack.com/services/\"]\n",
		"[notify]\nurl = \"https://hooks.slack.com/services/T0/B0/x\"\nurl_prefixes = [\"https://hooks.slack.com/services/\"]\ntimeout = \"5s\"\n",
		"[notify]\nurl = \"http://127.0.0.1:9000/hook\"\nurl_prefixes = [\"http://127.0.0.1:9000/\"]\n",
		"[notify]\nurl_prefixes = [\"https://hooks.slack.com/services/\"]\n", // --notify gives the URL
	} {
		if c, probs := Parse([]byte(data)); len(probs) != 0 {
			t.Errorf("%q: %v", data, probs)
		} else if c.Notify.TimeoutDuration() <= 0 {
			t.Errorf("%q: timeout %v", data, c.Notify.TimeoutDuration())
		}
	}
}

func TestNotifyEnvAndMissingAllowlist(t *testing.T) {
	_, probs := Parse([]byte("[notify]\nurl = \"env:1BAD\"\n"))
	if len(probs) != 2 || probs[0].Line != 2 || !strings.Contains(probs[0].Msg+probs[1].Msg, "url_prefixes is empty") ||
		!strings.Contains(probs[0].Msg+probs[1].Msg, "not an environment variable name") {
		t.Errorf("problems %v", probs)
	}
}

// TestCheckNotifyURL is the runtime rule `triage replay` applies to the URL it would post to.
func TestCheckNotifyURL(t *testing.T) {
	pre := []string{"https://hooks.slack.com/services/", "http://localhost:8080/hook"}
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://hooks.slack.com/services/T/B/x", true},
		{"https://HOOKS.slack.com:443/services/T/B/x", true},
		{"http://localhost:8080/hook", true},
		{"https://hooks.slack.com/servicesX/T", false},
		{"https://hooks.slack.com/services/../x", false},
		{"http://hooks.slack.com/services/T/B/x", false},
		{"https://user@hooks.slack.com/services/T/B/x", false},
		{"https://evil.example/services/T/B/x", false},
		{"javascript:alert(1)", false},
	} {
		err := CheckNotifyURL(c.url, pre)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v", c.url, err, c.ok)
		}
	}
	if err := CheckNotifyURL("https://hooks.slack.com/services/T/B/x", nil); err == nil || !strings.Contains(err.Error(), "no allowlist") {
		t.Errorf("no prefixes: %v", err)
	}
}

func TestResolveNotifyURL(t *testing.T) {
	env := map[string]string{"HOOK": " https://h.example/x "}
	get := func(k string) string { return env[k] }
	if u, fromEnv, err := ResolveNotifyURL("env:HOOK", get); err != nil || !fromEnv || u != "https://h.example/x" {
		t.Errorf("env: %q %v %v", u, fromEnv, err)
	}
	if u, fromEnv, err := ResolveNotifyURL("env:UNSET", get); err != nil || !fromEnv || u != "" {
		t.Errorf("unset: %q %v %v", u, fromEnv, err)
	}
	if u, fromEnv, err := ResolveNotifyURL("https://h.example/y", get); err != nil || fromEnv || u != "https://h.example/y" {
		t.Errorf("literal: %q %v %v", u, fromEnv, err)
	}
	if _, _, err := ResolveNotifyURL("env:a-b", get); err == nil {
		t.Error("a bad variable name was accepted")
	}
	if d := (NotifySection{}).TimeoutDuration(); d != DefaultNotifyTimeout {
		t.Errorf("default timeout %v", d)
	}
	if d := (NotifySection{Timeout: "3s"}).TimeoutDuration(); d != 3*time.Second {
		t.Errorf("timeout %v", d)
	}
}
