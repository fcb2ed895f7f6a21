// Package config reads triage's config file (DESIGN §8) and checks it, reporting every
// problem with the line it is on. It knows the file format only; main turns the result into
// the store's tab configs and the replayer's sources.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/triage-dev/triage/model"
)

// Config is the parsed config file.
type Config struct {
	Spreadsheet string `toml:"spreadsheet"`
	Refresh     string `toml:"refresh"`
	// FullRefresh is how often a refresh reads the whole sheet when nothing says it changed
	// (FullRefreshInterval).
	FullRefresh string `toml:"full_refresh"`
	ReadOnly    bool   `toml:"readonly"`
	// Mouse turns on mouse reporting in the TUI (wheel scrolling); off by default so the
	// terminal's own text selection keeps working.
	Mouse bool `toml:"mouse"`
	// OAuthClient is the client_secret.json of a Desktop OAuth client for `triage auth login`.
	OAuthClient string                   `toml:"oauth_client"`
	Tabs        map[string]TabSection    `toml:"tabs"`
	Sources     map[string]SourceSection `toml:"sources"`
	// Keys rebinds actions: `quit = ["q", "ctrl+c"]`.
	Keys map[string][]string `toml:"keys"`
	// Serve is `[serve]`: `triage serve`, the TUI for a team over SSH (DESIGN §9).
	Serve ServeSection `toml:"serve"`
	// Store is `[store]`: a PostgreSQL database instead of the sheet (store.go).
	Store StoreSection `toml:"store"`
	// Notify is `[notify]`: the alert `triage replay` posts when a run halts or leaves rows
	// not done (notify.go).
	Notify NotifySection `toml:"notify"`
	// Quota is `[quota]`: pacing under the Sheets API's per-minute quota (quota.go).
	Quota QuotaSection `toml:"quota"`
	// Mail is `[mail]`: replies to inbox messages, composed in an editor and sent (mail.go).
	Mail MailSection `toml:"mail"`
	// Warnings are problems that Load let through (see Problem.Warning).
	Warnings []Problem `toml:"-"`

	path  string
	lines lineIndex
	text  []string // the file's lines, to find an entry inside a multi-line array
}

// TabSection is `[tabs.<role>]`.
type TabSection struct {
	Name       string            `toml:"name"`
	Statuses   []string          `toml:"statuses"`
	Columns    map[string]string `toml:"columns"`
	StaleAfter string            `toml:"stale_after"`
	// MarkReadOnOpen (inbox only): opening a new message in the TUI sets it to read.
	MarkReadOnOpen bool `toml:"mark_read_on_open"`
	// Views are the tab's saved filters, `[[tabs.inbox.views]]` with a name and a filter:
	// the TUI's view bar switches between them ([ and ], or `:view NAME`).
	Views []ViewSection `toml:"views"`
	// Table lists the columns the TUI's table shows, in order (`table = ["age", "name",
	// "message", "status", "Phone"]`): a column of the tab by its title or field, or any other
	// of the sheet's by its header. Unset: the role's columns.
	Table []string `toml:"table"`
}

// ViewSection is one saved view of a tab: a name and a filter in the TUI's filter language.
type ViewSection struct {
	Name   string `toml:"name"`
	Filter string `toml:"filter"`
}

// SourceSection is `[sources.<name>]`: where a dead-letter source may be replayed to and how.
type SourceSection struct {
	Preset           string            `toml:"preset"`
	URLPrefixes      []string          `toml:"url_prefixes"`
	RedirectPrefixes []string          `toml:"redirect_prefixes"`
	Key              any               `toml:"key"`
	RatePerMinute    int               `toml:"rate_per_minute"`
	MaxAttempts      int               `toml:"max_attempts"`
	Timeout          string            `toml:"timeout"`
	KeyTTL           string            `toml:"key_ttl"`
	Concurrency      int               `toml:"concurrency"`
	Headers          map[string]string `toml:"headers"`
	// Outcomes overrides the outcome table: `"404" = "retryable"`.
	Outcomes map[string]string `toml:"outcomes"`
}

// Presets are the outcome tables a source can start from (DESIGN §5).
var Presets = []string{"rest", "apps-script"}

// Outcomes are the names an outcome override may use.
var Outcomes = []string{"delivered", "duplicate", "rejected", "systemic", "retryable"}

// Problem is one thing wrong with a config file, on a line (0 when it has none).
type Problem struct {
	Line int
	Msg  string
	// Key is the dotted key the problem is about ("sources.crm.url_prefixes"), "" when none.
	Key string
	// Warning marks a problem that does not stop triage from starting (a source without
	// url_prefixes only refuses that source's rows); `triage config check` still fails on it.
	Warning bool
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Error is a config that has problems; its message lists them all.
type Error struct {
	Path     string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config %s has %d problem(s):", e.Path, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		if e.Path != "" && p.Line > 0 {
			fmt.Fprintf(&b, "%s:%d: %s", e.Path, p.Line, p.Msg)
		} else {
			b.WriteString(p.String())
		}
	}
	return b.String()
}

// DefaultPathFrom is the config's default path, $XDG_CONFIG_HOME/triage/config.toml (~/.config
// when unset), reading the environment through getenv (the settings resolver's, never the
// process's own: internal/cli is the only reader of the environment).
func DefaultPathFrom(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			home = h
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "triage", "config.toml")
}

// Load reads a config file. A missing file at the default path is an empty config; a missing
// file that was named explicitly is an error. The returned error is an *Error when the file
// has problems.
func Load(path string, explicit bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			return &Config{path: path}, nil
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, probs := Parse(data)
	c.path = path
	c.Warnings = nil
	var fatal []Problem
	for _, p := range probs {
		if p.Warning {
			c.Warnings = append(c.Warnings, p)
		} else {
			fatal = append(fatal, p)
		}
	}
	if len(fatal) > 0 {
		return c, &Error{Path: path, Problems: probs}
	}
	return c, nil
}

// Check reads a config file and returns every problem in it, warnings included: what
// `triage config check` reports.
func Check(path string) ([]Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	_, probs := Parse(data)
	return probs, nil
}

// Parse decodes and checks config text, returning every problem found (not just the first).
func Parse(data []byte) (*Config, []Problem) {
	lines := indexLines(data)
	text := strings.Split(string(data), "\n")
	var probs []Problem
	var c *Config
	var md toml.MetaData
	// A value of the wrong type (readonly = "yes") stops the decoder at the first one. To
	// still report every problem, each such line is reported, blanked (keeping the line
	// numbers) and the file decoded again.
	for attempt := 0; ; attempt++ {
		c = &Config{lines: lines, text: text}
		var err error
		md, err = toml.NewDecoder(bytes.NewReader(data)).Decode(c)
		if err == nil {
			break
		}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return c, append(probs, Problem{Line: pe.Position.Line, Msg: pe.Message})
		}
		key := lastKeyIn(err.Error())
		line := lines.exact(key)
		probs = append(probs, Problem{Key: key, Line: lines.lineOf(key), Msg: typeMessage(key, err)})
		if line == 0 || attempt >= 50 {
			return c, probs
		}
		data = blankLine(data, line)
	}
	for _, k := range md.Undecoded() {
		key := k.String()
		// Free-form maps whose keys are not ours to know.
		if strings.HasPrefix(key, "sources.") && (strings.Contains(key, ".headers.") || strings.Contains(key, ".outcomes.")) {
			continue
		}
		if len(k) == 4 && k[0] == "tabs" && k[2] == "columns" {
			continue
		}
		if len(k) == 2 && k[0] == "keys" {
			continue
		}
		probs = append(probs, Problem{Key: key, Line: c.lines.lineOf(key), Msg: fmt.Sprintf("unknown key %q", key)})
	}
	probs = append(probs, c.check()...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	return c, probs
}

func (c *Config) check() []Problem {
	var probs []Problem
	add := func(key, format string, a ...any) {
		probs = append(probs, Problem{Key: key, Line: c.lines.lineOf(key), Msg: fmt.Sprintf(format, a...)})
	}
	if c.FullRefresh != "" {
		if d, err := positiveDuration(c.FullRefresh); err != nil || d < time.Second {
			add("full_refresh", "full_refresh %q is not a duration of a second or more (e.g. \"5m\")", c.FullRefresh)
		}
	}
	if c.Refresh != "" {
		if d, err := time.ParseDuration(c.Refresh); err != nil || d < 0 {
			add("refresh", "refresh %q is not a duration (use e.g. \"60s\", \"5m\"; \"0s\" turns auto-refresh off)", c.Refresh)
		}
	}
	located := func(ps []Problem) {
		for _, p := range ps {
			p.Line = c.lines.lineOf(p.Key)
			probs = append(probs, p)
		}
	}
	for _, role := range sortedKeys(c.Tabs) {
		located(CheckTab(role, c.Tabs[role]))
	}
	for _, name := range sortedKeys(c.Sources) {
		located(CheckSource(name, c.Sources[name]))
	}
	probs = append(probs, c.checkServe()...)
	probs = append(probs, c.checkNotify()...)
	probs = append(probs, c.checkQuota()...)
	probs = append(probs, c.checkStore()...)
	probs = append(probs, c.checkMail()...)
	return probs
}

// KeySpec is where a source carries the idempotency key: a header or a JSON body field.
type KeySpec struct {
	In   string // "header" or "body"
	Name string
}

// KeySpecs parses `key`: "header:Idempotency-Key" (the default), "body:id", or a list.
func (s SourceSection) KeySpecs() ([]KeySpec, error) {
	var raw []string
	switch v := s.Key.(type) {
	case nil:
		return []KeySpec{{In: "header", Name: "Idempotency-Key"}}, nil
	case string:
		raw = []string{v}
	case []any:
		for _, x := range v {
			str, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("key entries must be strings like \"header:Idempotency-Key\" or \"body:id\"")
			}
			raw = append(raw, str)
		}
	default:
		return nil, fmt.Errorf("key must be a string or a list of strings")
	}
	var out []KeySpec
	for _, r := range raw {
		in, name, ok := strings.Cut(r, ":")
		in = strings.ToLower(strings.TrimSpace(in))
		name = strings.TrimSpace(name)
		if !ok || name == "" || (in != "header" && in != "body") {
			return nil, fmt.Errorf("key %q must be \"header:NAME\" or \"body:FIELD\"", r)
		}
		if in == "header" {
			if err := model.CheckHeaderName(name); err != nil {
				return nil, fmt.Errorf("key %q: %w", r, err)
			}
		}
		out = append(out, KeySpec{In: in, Name: name})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("key is an empty list")
	}
	return out, nil
}

// BodyKeyField is the payload field that carries the key, or "".
func (s SourceSection) BodyKeyField() string {
	specs, err := s.KeySpecs()
	if err != nil {
		return ""
	}
	for _, k := range specs {
		if k.In == "body" {
			return k.Name
		}
	}
	return ""
}

// TabConfigs returns the configured tabs for every role, defaults applied, in role order.
func (c *Config) TabConfigs() []model.TabConfig {
	bodyKeys := map[string]string{}
	for name, s := range c.Sources {
		if f := s.BodyKeyField(); f != "" {
			bodyKeys[name] = f
		}
	}
	var out []model.TabConfig
	for _, r := range model.Roles {
		tc := model.DefaultTabConfig(r)
		if ts, ok := c.Tabs[string(r)]; ok {
			cols := ts.tabConfig(r).Columns
			if ts.Name != "" {
				tc.Name = ts.Name
			}
			for _, s := range ts.Statuses {
				tc.Statuses = append(tc.Statuses, strings.TrimSpace(s))
			}
			tc.Columns = cols
			if d, err := positiveDuration(ts.StaleAfter); err == nil && d > 0 {
				tc.StaleAfter = d
			}
			tc.MarkReadOnOpen = ts.MarkReadOnOpen && r == model.RoleInbox
			for _, c := range ts.Table {
				tc.TableColumns = append(tc.TableColumns, strings.TrimSpace(c))
			}
			for _, v := range ts.Views {
				tc.Views = append(tc.Views, model.View{Name: strings.TrimSpace(v.Name), Filter: strings.TrimSpace(v.Filter)})
			}
		}
		if r == model.RoleDeadLetter {
			tc.BodyKeyFields = bodyKeys
		}
		out = append(out, tc)
	}
	return out
}

// RefreshInterval is the auto-refresh period (default 60s; "0s" turns it off).
func (c *Config) RefreshInterval() time.Duration {
	if c.Refresh == "" {
		return 60 * time.Second
	}
	d, err := time.ParseDuration(c.Refresh)
	if err != nil || d < 0 {
		return 60 * time.Second
	}
	return d
}

// FullRefreshInterval is how often a refresh reads the whole sheet when neither Drive's
// version nor the rows after each tab's last say it changed: the bound on seeing an edit in
// the middle of a tab without Drive access, and on Drive's lag with it. 0: the store's
// default (5 minutes).
func (c *Config) FullRefreshInterval() time.Duration {
	d, err := positiveDuration(c.FullRefresh)
	if err != nil || d < time.Second {
		return 0
	}
	return d
}

// Line is the line of a dotted key ("keys.quit"), or of its nearest enclosing table; 0 when
// the file doesn't have it.
func (c *Config) Line(key string) int { return c.lines.lineOf(key) }

// Path is the file the config came from ("" when none).
func (c *Config) Path() string { return c.path }

func validRole(r model.Role) bool {
	for _, x := range model.Roles {
		if x == r {
			return true
		}
	}
	return false
}

// sortedKeys returns a map's keys in order, so problems and conversions don't depend on map
// iteration order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// lineIndex maps dotted keys ("sources.crm.timeout") and table headers ("sources.crm") to
// the 1-based line that defines them, so a problem found after decoding can name its line.
type lineIndex map[string]int

func indexLines(data []byte) lineIndex {
	idx := lineIndex{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	table := ""
	entries := map[string]int{} // how many [[name]] entries of an array of tables so far
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			name := strings.Trim(strings.SplitN(line, "#", 2)[0], " []")
			table = unquoteKey(name)
			if _, ok := idx[table]; !ok {
				idx[table] = n
			}
			if strings.HasPrefix(line, "[[") {
				// An entry of an array of tables is also found as name[i]
				// ("tabs.inbox.views[1]"), so a problem with one names its line.
				idx[fmt.Sprintf("%s[%d]", table, entries[table])] = n
				entries[table]++
			}
			// A quoted part may hold escapes ([serve.users."eve\u001b"]): index the name
			// as TOML reads it too, so a problem about it finds its line.
			if k, ok := decodedTable(name); ok {
				if _, seen := idx[k]; !seen {
					idx[k] = n
				}
			}
			continue
		}
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key := unquoteKey(strings.TrimSpace(k))
		if table != "" {
			key = table + "." + key
		}
		if _, ok := idx[key]; !ok {
			idx[key] = n
		}
	}
	return idx
}

// decodedTable is a table header's dotted name as TOML decodes it, when it has a quoted part.
func decodedTable(name string) (string, bool) {
	if !strings.ContainsAny(name, `"'`) {
		return "", false
	}
	var m map[string]any
	if _, err := toml.Decode("["+name+"]", &m); err != nil {
		return "", false
	}
	var parts []string
	for len(m) == 1 {
		var next map[string]any
		for k, v := range m {
			parts = append(parts, k)
			next, _ = v.(map[string]any)
		}
		m = next
	}
	return strings.Join(parts, "."), len(parts) > 0
}

// lineOf finds a key's line, falling back to its nearest enclosing table.
func (l lineIndex) lineOf(key string) int {
	for key != "" {
		if n, ok := l[key]; ok {
			return n
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

func unquoteKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// exact is the line that defines key itself (not an enclosing table), or 0.
func (l lineIndex) exact(key string) int { return l[key] }

// blankLine replaces a 1-based line with an empty one, so later line numbers stay true.
func blankLine(data []byte, line int) []byte {
	parts := bytes.SplitAfter(data, []byte("\n"))
	// A value may go on over several lines (an array, an inline table): blank until its
	// brackets close, so the next decode doesn't trip over the rest of it.
	depth := 0
	for i := line - 1; i < len(parts); i++ {
		depth += bracketDepth(parts[i])
		if bytes.HasSuffix(parts[i], []byte("\n")) {
			parts[i] = []byte("\n")
		} else {
			parts[i] = nil
		}
		if depth <= 0 {
			break
		}
	}
	return bytes.Join(parts, nil)
}

// bracketDepth is how many [ and { a line opens and doesn't close, outside strings and
// comments.
func bracketDepth(line []byte) int {
	depth := 0
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return depth
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		}
	}
	return depth
}

// typeMessage turns the TOML library's type error into one naming the key and what it wants.
// typeMessage says what a value of the wrong type should have been, in the config's words:
// `mouse = "yes"` is "mouse must be true or false, not a string", where the decoder says
// "TOML value has type string; destination has type boolean".
func typeMessage(key string, err error) string {
	msg := err.Error()
	if m := typeMismatchRE.FindStringSubmatch(msg); m != nil {
		want, got := tomlKinds[m[2]], tomlKinds[m[1]]
		if want != "" && got != "" {
			msg = fmt.Sprintf("must be %s, not %s", want, got)
		}
	} else if m := tableMismatchRE.FindStringSubmatch(msg); m != nil {
		if got := tomlKinds[m[1]]; got != "" {
			msg = "must be a table ([" + key + "] with its keys under it), not " + got
		}
	} else if i := strings.Index(msg, "incompatible types: "); i >= 0 {
		msg = msg[i+len("incompatible types: "):]
	}
	if key == "" {
		return msg
	}
	return fmt.Sprintf("%s %s", key, msg)
}

// The decoder's words for a value of the wrong type, and what they are in a config file.
var (
	typeMismatchRE  = regexp.MustCompile(`TOML value has type (\w+); destination has type (\w+)`)
	tableMismatchRE = regexp.MustCompile(`expected table but found (\w+)`)
	tomlKinds       = map[string]string{
		"string": "a string", "boolean": "true or false", "bool": "true or false",
		"integer": "a whole number", "int64": "a whole number", "float64": "a number", "float": "a number",
		"slice": "a list (in brackets: [\"a\", \"b\"])", "array": "a list", "map": "a table", "table": "a table",
		"time.Time": "a date", "datetime": "a date",
	}
)

func lastKeyIn(msg string) string {
	// BurntSushi's type errors read: toml: line N (last key "a.b"): ... where the key is
	// Go-quoted, so a quoted part (sources."crm v2") arrives with escaped quotes.
	i := strings.Index(msg, `last key "`)
	if i < 0 {
		return ""
	}
	rest := msg[i+len(`last key `):]
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return ""
	}
	key, err := strconv.Unquote(q)
	if err != nil {
		return ""
	}
	return unquoteKey(key)
}
