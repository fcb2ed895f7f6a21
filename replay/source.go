package replay

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
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
// url_prefixes, an allowlist entry that model.ParseURLPrefix refuses, an unknown preset or
// key placement, a header name or configured value no HTTP request can carry. The rules are
// the model's, the ones `config check` applies (invariant 12).
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
	for _, p := range s.URLPrefixes {
		if _, err := model.ParseURLPrefix(p); err != nil {
			return fmt.Errorf("source %s: url_prefixes entry: %w", s.Name, err)
		}
	}
	for _, p := range s.RedirectPrefixes {
		if _, err := model.ParseURLPrefix(p); err != nil {
			return fmt.Errorf("source %s: redirect_prefixes entry: %w", s.Name, err)
		}
	}
	for _, k := range s.keySpecs() {
		if (!strings.EqualFold(k.In, KeyInHeader) && !strings.EqualFold(k.In, KeyInBody)) || strings.TrimSpace(k.Name) == "" {
			return fmt.Errorf("source %s: key placement %q:%q must be header:NAME or body:FIELD", s.Name, k.In, k.Name)
		}
		if strings.EqualFold(k.In, KeyInHeader) {
			if err := model.CheckHeaderName(k.Name); err != nil {
				return fmt.Errorf("source %s: key placement: %w", s.Name, err)
			}
		}
	}
	names := make([]string, 0, len(s.Headers))
	for h := range s.Headers {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		if err := model.CheckHeaderSetting(h, s.Headers[h]); err != nil {
			return fmt.Errorf("source %s: %w", s.Name, err)
		}
	}
	return nil
}

// Redact describes a source's configured headers without their values, for dry runs and
// logs: "Authorization: env:CRM_TOKEN (set)", "X-Api-Key: (from config, hidden)". Whether an
// env variable is set is read through the client's Getenv, as its sends do, so a preview says
// "(set)" exactly when a send would find the secret.
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

// allowed is the allowlist decision of invariant 8 (model.URLUnderPrefixes, the one rule),
// returning the reason when the URL is not allowed.
func allowed(raw string, prefixes []string) (bool, string) {
	if len(prefixes) == 0 {
		return false, "no url_prefixes configured"
	}
	if err := model.URLUnderPrefixes(raw, prefixes); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// KeyTTLSkew is how far in the future a row's timestamp may lie and still pass a source's
// key_ttl guard: clocks of the caller that dead-lettered the call and of this machine differ
// a little. Beyond it, the row's age is unknown, so it can't be shown to be within the
// receiver's key lifetime.
const KeyTTLSkew = 5 * time.Minute

// keyTTLRefusal is the key_ttl guard: why a row failed at ts can't be replayed now under a
// source whose receiver remembers keys for ttl (0 = no limit), or "". A row older than ttl
// may be acted on twice (its key is forgotten); one without a timestamp, or with one in the
// future (beyond KeyTTLSkew), can't be shown to be younger. --force overrides all three.
func keyTTLRefusal(source string, ttl time.Duration, ts, now time.Time) string {
	if ttl <= 0 {
		return ""
	}
	switch {
	case ts.IsZero():
		return fmt.Sprintf("has no timestamp, so it can't be checked against %s's key lifetime (%s); replay with --force if a duplicate is acceptable", source, ttl)
	case ts.Sub(now) > KeyTTLSkew:
		return fmt.Sprintf("its timestamp %s is %s in the future, so it can't be shown to be within %s's key lifetime (%s): check the timestamp cell (and the sheet's time zone), or replay with --force if a duplicate is acceptable",
			ts.UTC().Format(time.RFC3339), ts.Sub(now).Round(time.Minute), source, ttl)
	case now.Sub(ts) > ttl:
		return fmt.Sprintf("failed %s ago, beyond %s's key lifetime (%s): its key may no longer stop a duplicate; replay with --force if that is acceptable", now.Sub(ts).Round(time.Minute), source, ttl)
	}
	return ""
}

// unsendableKey says why a row's effective key can't be sent (invariant 3: a key no header
// can carry is refused before sending, and is no attempt), and where to fix it; "" when it
// can be sent.
func unsendableKey(t *model.Table, r *model.Record, key string, origin model.KeyOrigin) string {
	err := model.CheckKey(key)
	if err == nil {
		return ""
	}
	where := "fix the key cell"
	if origin == model.KeyPayload {
		field := t.Config.BodyKeyFields[strings.TrimSpace(t.Get(r, model.FSource))]
		where = fmt.Sprintf("fix the payload's %q field", field)
	}
	return fmt.Sprintf("%v; %s; not sent", err, where)
}
