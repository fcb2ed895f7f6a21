package replay

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
)

// KeySpec is one place a source carries the idempotency key.
type KeySpec struct {
	// In is "header" or "body".
	In string
	// Name is the header name ("Idempotency-Key") or the top-level JSON body field ("id").
	Name string
}

// Key placements.
const (
	KeyInHeader = "header"
	KeyInBody   = "body"
)

// DefaultKeyHeader is the header a source carries the key in when it configures none.
const DefaultKeyHeader = "Idempotency-Key"

// DefaultAppsScriptRedirect is the apps-script preset's redirect prefix.
const DefaultAppsScriptRedirect = "https://script.googleusercontent.com/"

// Defaults of a source.
const (
	DefaultMaxAttempts           = 3
	DefaultAppsScriptMaxAttempts = 2
	DefaultTimeout               = 20 * time.Second
)

// Source is a configured destination of dead-lettered calls (`[sources.NAME]`, DESIGN §8):
// where its rows may be sent, how the key is carried, which secrets go along, and how answers
// are classified. A Source is read-only once given to a Client.
type Source struct {
	// Name is the value of the rows' source cell.
	Name string
	// Preset is "rest" (default) or "apps-script".
	Preset string
	// URLPrefixes are the only destinations allowed (invariant 8); none means every row of the
	// source is refused.
	URLPrefixes []string
	// RedirectPrefixes are where the apps-script hop may go (default
	// https://script.googleusercontent.com/ for that preset; unused by rest).
	RedirectPrefixes []string
	// Key says where the key goes; default [{header Idempotency-Key}].
	Key []KeySpec
	// Headers are sent with every call of the source, to its own URL only. A value "env:NAME"
	// is read from the environment at send time. Values are never printed (see Redact).
	Headers map[string]string
	// RatePerMinute bounds requests to the source (0 = unlimited).
	RatePerMinute int
	// MaxAttempts bounds attempts per call (default 3; apps-script 2).
	MaxAttempts int
	// Timeout bounds each attempt (default 20s), the apps-script hop included.
	Timeout time.Duration
	// KeyTTL is how long the receiver remembers keys; a row older than this is refused
	// unless forced, because its key no longer protects against a duplicate (0 = no limit).
	KeyTTL time.Duration
	// Concurrency bounds this source's rows in progress at once (0 = the run's bound).
	Concurrency int
	// Overrides replace entries of the outcome table: an HTTP status ("404"), "timeout" or
	// "network" mapped to an outcome.
	Overrides map[string]Outcome
}

func (s *Source) preset() string {
	if strings.EqualFold(strings.TrimSpace(s.Preset), PresetAppsScript) {
		return PresetAppsScript
	}
	return PresetREST
}

func (s *Source) maxAttempts() int {
	switch {
	case s.MaxAttempts > 0:
		return s.MaxAttempts
	case s.preset() == PresetAppsScript:
		return DefaultAppsScriptMaxAttempts
	}
	return DefaultMaxAttempts
}

func (s *Source) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

func (s *Source) keySpecs() []KeySpec {
	if len(s.Key) == 0 {
		return []KeySpec{{In: KeyInHeader, Name: DefaultKeyHeader}}
	}
	return s.Key
}

func (s *Source) redirectPrefixes() []string {
	if len(s.RedirectPrefixes) > 0 {
		return s.RedirectPrefixes
	}
	if s.preset() == PresetAppsScript {
		return []string{DefaultAppsScriptRedirect}
	}
	return nil
}

// bodyKeyField returns the body field the source carries the key in, or "".
func (s *Source) bodyKeyField() string {
	for _, k := range s.keySpecs() {
		if strings.EqualFold(k.In, KeyInBody) {
			return k.Name
		}
	}
	return ""
}

// envNames lists the environment variables the source's headers read, sorted.
func (s *Source) envNames() []string {
	var out []string
	for _, v := range s.Headers {
		if name, ok := strings.CutPrefix(strings.TrimSpace(v), "env:"); ok && name != "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Validate reports the first thing that would make every row of the source fail locally: no
// url_prefixes, a prefix that isn't an http(s) URL, an unknown preset or key placement.
func (s *Source) Validate() error {
	if s == nil {
		return fmt.Errorf("source is not configured")
	}
	if p := strings.TrimSpace(s.Preset); p != "" && !strings.EqualFold(p, PresetREST) && !strings.EqualFold(p, PresetAppsScript) {
		return fmt.Errorf("source %s: unknown preset %q (rest or apps-script)", s.Name, s.Preset)
	}
	if len(s.URLPrefixes) == 0 {
		return fmt.Errorf("source %s has no url_prefixes: add url_prefixes = [\"https://...\"] to [sources.%s]", s.Name, s.Name)
	}
	for _, p := range append(append([]string(nil), s.URLPrefixes...), s.RedirectPrefixes...) {
		if _, err := parsePrefix(p); err != nil {
			return fmt.Errorf("source %s: %w", s.Name, err)
		}
	}
	for _, k := range s.keySpecs() {
		if (!strings.EqualFold(k.In, KeyInHeader) && !strings.EqualFold(k.In, KeyInBody)) || strings.TrimSpace(k.Name) == "" {
			return fmt.Errorf("source %s: key placement %q:%q must be header:NAME or body:FIELD", s.Name, k.In, k.Name)
		}
	}
	return nil
}

// Redact describes a source's configured headers without their values, for dry runs and
// logs: "Authorization: env:CRM_TOKEN (set)", "X-Api-Key: (from config, hidden)". Whether an
// env variable is set is read from the process environment.
func Redact(src *Source) []string { return redact(src, os.Getenv) }

// Redact is like the package-level Redact but reads the environment through the client's
// Getenv, as its sends do, so a preview says "(set)" exactly when a send would find the secret.
func (c *Client) Redact(src *Source) []string { return redact(src, c.getenv) }

func redact(src *Source, getenv func(string) string) []string {
	if src == nil {
		return nil
	}
	names := make([]string, 0, len(src.Headers))
	for h := range src.Headers {
		names = append(names, h)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, h := range names {
		v := strings.TrimSpace(src.Headers[h])
		if env, ok := strings.CutPrefix(v, "env:"); ok {
			state := "not set"
			if getenv(env) != "" {
				state = "set"
			}
			out = append(out, fmt.Sprintf("%s: env:%s (%s)", h, env, state))
			continue
		}
		out = append(out, fmt.Sprintf("%s: (from config, hidden)", h))
	}
	return out
}

// prefix is a parsed, normalised url_prefixes / redirect_prefixes entry.
type prefix struct {
	scheme, host, path string
}

// parsePrefix parses an allowlist entry: an absolute http(s) URL with a host and no user
// info, query or fragment.
func parsePrefix(s string) (prefix, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return prefix{}, fmt.Errorf("prefix %q is not a URL: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return prefix{}, fmt.Errorf("prefix %q must be an http(s) URL with a host (and no user, query or fragment)", s)
	}
	return prefix{scheme: u.Scheme, host: normHost(u), path: u.EscapedPath()}, nil
}

// normHost lower-cases a URL's host and drops its scheme's default port.
func normHost(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	p := u.Port()
	if p == "" || (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		return h
	}
	return h + ":" + p
}

// allowed reports whether a URL lies under one of the prefixes. The URL is parsed and
// compared by scheme, host (case-insensitive, default port folded) and path, so
// "https://crm.example.com.evil.io/" is not under "https://crm.example.com" and
// "https://crm.example.com@evil.io/" (user info) is never allowed. A prefix path that does not
// end in "/" matches whole path segments only ("/api" allows "/api" and "/api/x", not
// "/api2"). Paths with dot segments ("/api/../admin") are refused outright. It returns the
// reason when not allowed.
func allowed(raw string, prefixes []string) (bool, string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false, fmt.Sprintf("url %q is not a URL", raw)
	}
	if !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return false, fmt.Sprintf("url %q is not an absolute URL", raw)
	}
	if u.User != nil {
		return false, fmt.Sprintf("url %q carries user info (user@host): refused", raw)
	}
	if hasDotSegment(u.EscapedPath()) {
		return false, fmt.Sprintf("url %q has a . or .. path segment: refused", raw)
	}
	if len(prefixes) == 0 {
		return false, "no url_prefixes configured"
	}
	scheme, host, path := strings.ToLower(u.Scheme), normHost(u), u.EscapedPath()
	for _, ps := range prefixes {
		p, err := parsePrefix(ps)
		if err != nil {
			continue
		}
		if p.scheme != scheme || p.host != host {
			continue
		}
		if p.path == "" || p.path == "/" || path == p.path {
			return true, ""
		}
		if strings.HasPrefix(path, p.path) && (strings.HasSuffix(p.path, "/") || path[len(p.path)] == '/') {
			return true, ""
		}
	}
	return false, fmt.Sprintf("url %s is not under any allowed prefix (%s)", raw, strings.Join(prefixes, ", "))
}

func hasDotSegment(escapedPath string) bool {
	for _, seg := range strings.Split(escapedPath, "/") {
		s, err := url.PathUnescape(seg)
		if err != nil {
			return true
		}
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}
