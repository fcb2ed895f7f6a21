package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
)

// NotifySection is `[notify]`: where `triage replay` posts its one alert when a run halts or
// leaves rows not done, and where it may post at all.
//
//	[notify]
//	url = "env:TRIAGE_NOTIFY_URL"      # or a literal URL; --notify beats it
//	url_prefixes = ["https://hooks.slack.com/services/"]
//	timeout = "10s"
//
// The alert goes through the same rules as a replay (invariant 8): the URL must lie under
// one of url_prefixes (model.URLUnderPrefixes), redirects are not followed, and the attempt
// has a timeout. A webhook URL is itself a secret (Slack's and Teams' carry their token in the
// path), so it is best read from the environment, and messages name only its host.
type NotifySection struct {
	URL         string   `toml:"url"`
	URLPrefixes []string `toml:"url_prefixes"`
	Timeout     string   `toml:"timeout"`
}

// DefaultNotifyTimeout bounds the alert's one POST when [notify] timeout is unset.
const DefaultNotifyTimeout = 10 * time.Second

// MaxNotifyTimeout is the longest timeout accepted: an alert must not hold a cron run open.
const MaxNotifyTimeout = time.Minute

// TimeoutDuration is the alert's timeout as the runtime reads it.
func (n NotifySection) TimeoutDuration() time.Duration {
	d, err := positiveDuration(n.Timeout)
	if err != nil || d == 0 || d > MaxNotifyTimeout {
		return DefaultNotifyTimeout
	}
	return d
}

// checkNotify returns every problem of `[notify]`, each with its key (Parse adds the line).
func (c *Config) checkNotify() []Problem {
	n := c.Notify
	var probs []Problem
	add := func(key, format string, a ...any) {
		probs = append(probs, Problem{Key: "notify." + key, Line: c.lines.lineOf("notify." + key), Msg: fmt.Sprintf(format, a...)})
	}
	for _, p := range n.URLPrefixes {
		if err := CheckNotifyPrefix(p); err != nil {
			add("url_prefixes", "notify.url_prefixes entry: %v", err)
		}
	}
	if n.Timeout != "" {
		if d, err := positiveDuration(n.Timeout); err != nil || d == 0 || d > MaxNotifyTimeout {
			add("timeout", "notify.timeout %q is not a duration from 1s to %s (e.g. \"10s\")", n.Timeout, MaxNotifyTimeout)
		}
	}
	v := strings.TrimSpace(n.URL)
	if v == "" {
		if n.URL != "" {
			add("url", "notify.url is blank: remove it, or give a URL or \"env:NAME\"")
		}
		return probs
	}
	if len(n.URLPrefixes) == 0 {
		add("url", "notify.url is set but notify.url_prefixes is empty: alerts go only under an allowed prefix; add url_prefixes = [\"https://hooks.slack.com/services/\"] (your webhook's host and path)")
	}
	if env, ok := strings.CutPrefix(v, model.EnvPrefix); ok {
		if !model.ValidEnvName(env) {
			add("url", "notify.url reads %q, which is not an environment variable name (letters, digits and _, not starting with a digit)", v)
		}
		return probs
	}
	if len(n.URLPrefixes) > 0 {
		if err := CheckNotifyURL(v, n.URLPrefixes); err != nil {
			add("url", "notify.url: %v", err)
		}
	}
	return probs
}

// ResolveNotifyURL reads a notify setting (from --notify or [notify] url): a literal URL, or
// "env:NAME" read through getenv. An "env:" setting whose variable is unset or empty gives ""
// with fromEnv set, so the caller can say that no alert will be sent.
func ResolveNotifyURL(setting string, getenv func(string) string) (u string, fromEnv bool, err error) {
	v := strings.TrimSpace(setting)
	env, ok := strings.CutPrefix(v, model.EnvPrefix)
	if !ok {
		return v, false, nil
	}
	if !model.ValidEnvName(env) {
		return "", true, fmt.Errorf("notify %q: not an environment variable name (letters, digits and _, not starting with a digit)", v)
	}
	return strings.TrimSpace(getenv(env)), true, nil
}

// CheckNotifyURL is the one rule for an alert's destination, applied by `config check` to a
// literal [notify] url and by `triage replay` to the URL it is about to post to: an https URL
// (or http to a loopback address, for a local relay or a test) under one of prefixes, by the
// replay allowlist's rule. Its message names the URL's host only: a webhook URL carries its
// token in the path, and errors end up in cron mail.
func CheckNotifyURL(raw string, prefixes []string) error {
	host := notifyHost(raw)
	if err := checkNotifyScheme(raw); err != nil {
		return err
	}
	if len(prefixes) == 0 {
		return fmt.Errorf("the notify URL (host %s) has no allowlist: add [notify] url_prefixes = [\"https://%s/...\"] to the config", host, host)
	}
	if err := model.URLUnderPrefixes(raw, prefixes); err != nil {
		return fmt.Errorf("the notify URL (host %s) is not under any of the %d [notify] url_prefixes: add its prefix there, or fix the URL", host, len(prefixes))
	}
	return nil
}

// CheckNotifyPrefix checks one [notify] url_prefixes entry: a valid allowlist entry
// (model.ParseURLPrefix) that is https, or http to a loopback address.
func CheckNotifyPrefix(p string) error {
	if _, err := model.ParseURLPrefix(p); err != nil {
		return err
	}
	return checkNotifyScheme(p)
}

// checkNotifyScheme wants https, or plain http only to this machine: an alert over http
// across a network would carry the webhook's token in clear.
func checkNotifyScheme(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the notify URL is not an absolute https URL (https://host/path)")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("the notify URL (host %s) is http: use https (plain http is accepted only to a loopback address)", notifyHost(raw))
	}
	return fmt.Errorf("the notify URL has the scheme %q: use https", u.Scheme)
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// notifyHost is the host of a notify URL for messages (never the path, which may hold a token).
func notifyHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unreadable)"
	}
	return model.SanitizeLine(u.Host)
}
