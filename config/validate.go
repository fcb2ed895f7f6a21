package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
)

// The one validator (invariant 12): Parse (behind both `triage config check` and Load, which
// every command runs at startup) reports what CheckSource and CheckTab find, and main's
// buildSources refuses a source section on the same findings before converting it. The
// rules that are not about the file format (URLs, header names and values, column mappings)
// are model functions that the replay client and the store apply again at run time, so
// nothing can pass `config check` and be refused later, or the reverse.

// Bounds of a source's settings. MaxSourceConcurrency is replay.MaxConcurrency (config can't
// import replay; a test in main keeps them equal).
const (
	MaxSourceAttempts    = 10
	MaxSourceConcurrency = 20
)

// CheckSource returns every problem of a `[sources.NAME]` section, each with the dotted key
// it is about (Problem.Key) and no line (Parse adds it). A source without url_prefixes is a
// warning: triage starts, and refuses that source's rows with a reason naming it.
func CheckSource(name string, s SourceSection) []Problem {
	base := "sources." + name
	var probs []Problem
	add := func(key, format string, a ...any) {
		probs = append(probs, Problem{Key: base + key, Msg: fmt.Sprintf(format, a...)})
	}
	if p := strings.TrimSpace(s.Preset); p != "" && !contains(Presets, strings.ToLower(p)) {
		add(".preset", "source %s: unknown preset %q (presets: %s)", name, s.Preset, strings.Join(Presets, ", "))
	}
	if len(s.URLPrefixes) == 0 {
		probs = append(probs, Problem{Key: base, Warning: true,
			Msg: fmt.Sprintf("source %s has no url_prefixes: its rows will be refused; add url_prefixes = [\"https://...\"]", name)})
	}
	for _, p := range s.URLPrefixes {
		if _, err := model.ParseURLPrefix(p); err != nil {
			add(".url_prefixes", "source %s: url_prefixes entry: %v", name, err)
		}
	}
	for _, p := range s.RedirectPrefixes {
		if _, err := model.ParseURLPrefix(p); err != nil {
			add(".redirect_prefixes", "source %s: redirect_prefixes entry: %v", name, err)
		}
	}
	if _, err := s.KeySpecs(); err != nil {
		add(".key", "source %s: %v", name, err)
	}
	if s.RatePerMinute < 0 {
		add(".rate_per_minute", "source %s: rate_per_minute must be ≥ 0 (0 = unlimited)", name)
	}
	if s.MaxAttempts < 0 || s.MaxAttempts > MaxSourceAttempts {
		add(".max_attempts", "source %s: max_attempts must be between 1 and %d", name, MaxSourceAttempts)
	}
	if s.Concurrency < 0 || s.Concurrency > MaxSourceConcurrency {
		add(".concurrency", "source %s: concurrency must be between 1 and %d", name, MaxSourceConcurrency)
	}
	for _, d := range []struct{ key, v string }{{"timeout", s.Timeout}, {"key_ttl", s.KeyTTL}} {
		if _, err := positiveDuration(d.v); err != nil {
			add("."+d.key, "source %s: %s %q is not a positive duration (e.g. \"20s\", \"24h\")", name, d.key, d.v)
		}
	}
	seen := map[string]string{}
	for _, code := range sortedKeys(s.Outcomes) {
		key, ok := overrideKey(code)
		if !ok {
			add(".outcomes."+code, "source %s: outcome override %q is not an HTTP status (100-599), \"timeout\" or \"network\"", name, code)
		} else if prev, dup := seen[key]; dup {
			add(".outcomes."+code, "source %s: outcome overrides %q and %q are the same answer: keep one", name, prev, code)
		} else {
			seen[key] = code
		}
		if o := strings.ToLower(strings.TrimSpace(s.Outcomes[code])); !contains(Outcomes, o) {
			add(".outcomes."+code, "source %s: outcome %q for %s is not one of %s", name, s.Outcomes[code], code, strings.Join(Outcomes, ", "))
		}
	}
	for _, h := range sortedKeys(s.Headers) {
		if err := model.CheckHeaderSetting(h, s.Headers[h]); err != nil {
			add(".headers."+h, "source %s: %v", name, err)
		}
	}
	return probs
}

// CheckTab returns every problem of a `[tabs.ROLE]` section, each with the dotted key it is
// about and no line.
func CheckTab(role string, ts TabSection) []Problem {
	base := "tabs." + role
	var probs []Problem
	add := func(key, format string, a ...any) {
		probs = append(probs, Problem{Key: base + key, Msg: fmt.Sprintf(format, a...)})
	}
	r := model.Role(role)
	if !validRole(r) {
		add("", "unknown tab role %q (roles are inbox, deadletter, queue)", role)
		return probs
	}
	// Field names are case-insensitive (TabConfigs lower-cases them): two spellings of one
	// field would leave which one wins to chance.
	keyOf := map[model.Field]string{}
	for _, f := range sortedKeys(ts.Columns) {
		lf := model.Field(strings.ToLower(strings.TrimSpace(f)))
		if prev, dup := keyOf[lf]; dup {
			add(".columns."+f, "tab %s: column %s is mapped twice (%q and %q): keep one", role, lf, prev, f)
			continue
		}
		keyOf[lf] = f
	}
	for _, p := range model.CheckColumns(ts.tabConfig(r)) {
		add(".columns."+keyOf[p.Field], "%s", p.Msg)
	}
	if ts.StaleAfter != "" {
		if r != model.RoleQueue {
			add(".stale_after", "stale_after only applies to the queue tab")
		}
		if d, err := positiveDuration(ts.StaleAfter); err != nil || d == 0 {
			add(".stale_after", "stale_after %q is not a positive duration (e.g. \"30m\")", ts.StaleAfter)
		}
	}
	if ts.MarkReadOnOpen {
		if r != model.RoleInbox {
			add(".mark_read_on_open", "mark_read_on_open only applies to the inbox tab")
		} else if !hasStatus(ts.Statuses, "read") {
			add(".mark_read_on_open", "mark_read_on_open sets a message to \"read\", which statuses doesn't list: add it, or turn the option off")
		}
	}
	shown := map[string]bool{}
	for _, c := range ts.Table {
		n := model.NormHeader(c)
		if n == "" || shown[n] {
			add(".table", "tab %s: table lists an empty or repeated column %q", role, c)
		}
		shown[n] = true
	}
	names := map[string]bool{}
	for i, v := range ts.Views {
		key := fmt.Sprintf(".views[%d]", i)
		n := strings.ToLower(strings.TrimSpace(v.Name))
		switch {
		case n == "":
			add(key, "tab %s: view %d has no name", role, i+1)
		case n == "all":
			add(key, "tab %s: a view may not be called %q: that is the tab without a filter", role, v.Name)
		case names[n]:
			add(key, "tab %s: two views are called %q", role, v.Name)
		case strings.ContainsFunc(v.Name, func(r rune) bool { return r < ' ' || r == 0x7f }):
			add(key, "tab %s: view %q has a control character in its name", role, v.Name)
		}
		names[n] = true
		// The filter's field names are the sheet's columns, known once it is read: the TUI says
		// what is wrong with one as it says it of a filter typed.
		if strings.TrimSpace(v.Filter) == "" {
			add(key, "tab %s: view %q has no filter (the tab without one is \"all\", always there)", role, v.Name)
		}
	}
	seen := map[string]bool{}
	for _, s := range ts.Statuses {
		n := strings.ToLower(strings.TrimSpace(s))
		if n == "" || seen[n] {
			add(".statuses", "statuses has an empty or repeated entry %q", s)
		}
		seen[n] = true
	}
	return probs
}

// tabConfig is the section as the runtime reads it (TabConfigs), without the defaults that
// don't come from the section.
func (ts TabSection) tabConfig(r model.Role) model.TabConfig {
	tc := model.DefaultTabConfig(r)
	if len(ts.Columns) > 0 {
		tc.Columns = map[model.Field]string{}
		for _, f := range sortedKeys(ts.Columns) {
			lf := model.Field(strings.ToLower(strings.TrimSpace(f)))
			if _, dup := tc.Columns[lf]; !dup {
				tc.Columns[lf] = ts.Columns[f]
			}
		}
	}
	return tc
}

// PresetName is the preset as the runtime reads it: trimmed, lower case, "rest" when unset.
func (s SourceSection) PresetName() string {
	if p := strings.ToLower(strings.TrimSpace(s.Preset)); p != "" {
		return p
	}
	return "rest"
}

// TimeoutDuration is the per-attempt timeout (0 when unset or invalid: the default applies).
func (s SourceSection) TimeoutDuration() time.Duration {
	d, _ := positiveDuration(s.Timeout)
	return d
}

// KeyTTLDuration is the receiver's key lifetime (0 when unset or invalid: no limit).
func (s SourceSection) KeyTTLDuration() time.Duration {
	d, _ := positiveDuration(s.KeyTTL)
	return d
}

// OutcomeOverrides returns the outcome overrides normalised as the runtime uses them: the
// key is a status ("404") or "timeout" / "network", the value an outcome name in lower case.
// Entries CheckSource refuses are left out.
func (s SourceSection) OutcomeOverrides() map[string]string {
	out := map[string]string{}
	for _, code := range sortedKeys(s.Outcomes) {
		key, ok := overrideKey(code)
		o := strings.ToLower(strings.TrimSpace(s.Outcomes[code]))
		if _, dup := out[key]; ok && !dup && contains(Outcomes, o) {
			out[key] = o
		}
	}
	return out
}

// overrideKey normalises an outcome override's key: an HTTP status without leading zeros,
// or "timeout" / "network".
func overrideKey(code string) (string, bool) {
	k := strings.ToLower(strings.TrimSpace(code))
	if k == "timeout" || k == "network" {
		return k, true
	}
	n, err := strconv.Atoi(k)
	if err != nil || n < 100 || n > 599 {
		return "", false
	}
	return strconv.Itoa(n), true
}

// positiveDuration reads a duration setting as the runtime does: trimmed, 0 when empty,
// else it must parse and be positive.
func positiveDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s is not positive", v)
	}
	return d, nil
}

// hasStatus reports whether a configured status list allows s: an empty list means the
// sheet's dropdown or the role's defaults decide (those include read in the inbox).
func hasStatus(statuses []string, s string) bool {
	if len(statuses) == 0 {
		return true
	}
	for _, v := range statuses {
		if strings.EqualFold(strings.TrimSpace(v), s) {
			return true
		}
	}
	return false
}
