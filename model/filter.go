package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Filter is a parsed filter query, the language of `/` in the TUI and `triage list --filter`:
//
//   - Terms are separated by spaces; a row must match every term.
//   - A term is free text, found case-insensitively anywhere in the row (any cell, its status,
//     its problems), or `field:value`, found in one column. The fields are the tab's columns
//     (schema name, header or alias, case and `_`/`-`/spaces ignored: `claimed_by`,
//     `claimedBy`), `status`, and `kind`: the error's kind (ErrorKind: "503", "timeout") on
//     a tab with an error column and no column called kind (a queue's type is "kind"). On
//     the dead-letter tab `key` (and `id`) is the row's effective key. Fields lists them.
//   - One rule for matching: `status:` and `kind:` match the start of the value, every other
//     field and free text match anywhere in it; so typing a prefix always finds the row
//     (`status:n` is new, `source:cr` is crm).
//   - `a|b` inside a term is OR: `status:new|read`, `source:crm|billing`, `timeout|503`.
//     Empty alternatives are ignored (`status:new|` while typing is `status:new`).
//   - A leading `!` negates the whole term, OR included: `!status:done|spam`.
//   - Double quotes make a phrase, spaces and `: | !` included: `"call me"`,
//     `message:"two words"`, `"re:hello"`. An unclosed quote runs to the end of the query, so
//     typing never produces an error. There is no escape: a `"` itself can't be searched
//     for (search the text next to it).
//   - A word is a field term only when what comes before its first `:` looks like a name
//     (a letter or `_`, then letters, digits, `_`, `-` or `.`), is not a URL scheme
//     (http, https, mailto, ftp, file, ws, wss) and is not followed by `//`; so
//     `https://x`, `http:` and `12:30` are plain text. A name that is no field of the tab
//     (`is:new`) is an unknown field: Matcher.Unknown reports it (the CLI refuses the
//     filter, the TUI says so), and meanwhile the term is searched as text.
//   - `after:DATE` and `before:DATE` keep the rows whose time (the timestamp; a job's
//     claimedAt) is at or after DATE, or before it: `after:2026-01-01 before:2026-02-01` is
//     January. DATE is 2026-01-31, 2026-01-31T12:00 or 2026-01-31T12:00:00, in the tab's time
//     zone (the spreadsheet's; UTC on a database), or RFC 3339 with its own offset. A row
//     without a time matches neither. A value that isn't a date (yet, while typing) matches
//     nothing, and Matcher.DateProblem says what it should look like; `after:` alone matches
//     everything. A tab with a column of that name searches the column instead.
//   - On a store that loads only the open work (a database), the status and date terms reach
//     into history: Matcher.History is what the store runs in SQL.
type Filter struct {
	Query string
	terms []term
}

type term struct {
	neg bool
	// name is the field as typed, lower case; "" = free text.
	name string
	// alts are the lower-case alternatives, empty ones dropped; a field term whose
	// alternatives are all empty has one "" (it matches any value).
	alts []string
}

// urlSchemes are the names before a ':' that start a URL, not a field.
var urlSchemes = map[string]bool{"http": true, "https": true, "mailto": true, "ftp": true, "file": true, "ws": true, "wss": true}

// ParseFilter parses a query. It never fails: what isn't a field term is text, an unclosed
// quote runs to the end, and unknown fields are found when the filter is bound to a table.
func ParseFilter(q string) Filter {
	f := Filter{Query: q}
	rs := []rune(q)
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) {
			i++
			continue
		}
		var t term
		t, i = parseTerm(rs, i)
		if len(t.alts) > 0 {
			f.terms = append(f.terms, t)
		}
	}
	return f
}

// parseTerm reads one term starting at rs[i] (not a space) up to the next space outside
// quotes, and returns it with the index after it. A term with nothing to match (`!`, `""`,
// `|`) has no alternatives.
func parseTerm(rs []rune, i int) (term, int) {
	var t term
	if rs[i] == '!' {
		t.neg = true
		i++
	}
	var alts []string
	var cur strings.Builder
	quoted, quoteSeen, named := false, false, false
	for ; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '"':
			quoted, quoteSeen = !quoted, true
		case quoted:
			cur.WriteRune(c)
		case unicode.IsSpace(c):
			return t.finish(append(alts, cur.String())), i
		case c == '|':
			alts = append(alts, cur.String())
			cur.Reset()
		case c == ':' && !named && !quoteSeen && len(alts) == 0 && isFieldName(cur.String()) &&
			!urlSchemes[strings.ToLower(cur.String())] && !strings.HasPrefix(string(rs[i+1:]), "//"):
			t.name, named = strings.ToLower(cur.String()), true
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
	}
	return t.finish(append(alts, cur.String())), i
}

// finish keeps the non-empty alternatives, lower-cased.
func (t term) finish(alts []string) term {
	for _, a := range alts {
		if a != "" {
			t.alts = append(t.alts, strings.ToLower(a))
		}
	}
	if len(t.alts) == 0 && t.name != "" {
		t.alts = []string{""}
	}
	return t
}

// isFieldName reports whether s can name a field: a letter or `_`, then letters, digits,
// `_`, `-` or `.` ("12" of "12:30" can't).
func isFieldName(s string) bool {
	for i, c := range s {
		ok := unicode.IsLetter(c) || c == '_' || (i > 0 && (unicode.IsDigit(c) || c == '-' || c == '.'))
		if !ok {
			return false
		}
	}
	return s != ""
}

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool { return len(f.terms) == 0 }

// Narrows reports whether every row f matches also matches prev, judged from the two queries
// alone (for any table), so f can be computed from prev's result instead of the whole table.
// It holds when each term of prev is implied by a term of f: same negation and field, and
// for a positive term every alternative of f's contains one of prev's (a prefix of it for a
// field: status and kind match by prefix), for a negative term the other way round. So
// `status:n` → `status:ne` and `crm` → `crm 503` narrow, while `a|b` → `a|bc`, `!ab` →
// `!abc` and `"ab` → `"ab|c` (a new alternative) widen.
func (f Filter) Narrows(prev Filter) bool {
	for _, p := range prev.terms {
		found := false
		for _, n := range f.terms {
			if n.implies(p) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// implies reports whether every row matching n matches p.
func (n term) implies(p term) bool {
	if n.neg != p.neg || n.name != p.name {
		return false
	}
	if n.name == "after" || n.name == "before" {
		// A date isn't a prefix of a later one (`after:2026-0` matches nothing yet): only the
		// same term implies itself.
		return slices.Equal(n.alts, p.alts)
	}
	within := strings.Contains // free text: found anywhere
	if n.name != "" {
		within = strings.HasPrefix // prefix for status/kind, and a prefix is also a substring
	}
	// covers: every alternative of narrow is found wherever one of wide's is.
	covers := func(narrow, wide []string) bool {
		for _, a := range narrow {
			ok := false
			for _, b := range wide {
				if within(a, b) {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
	if n.neg {
		return covers(p.alts, n.alts)
	}
	return covers(n.alts, p.alts)
}

// Matcher is a filter bound to one table, with field columns resolved once.
type Matcher struct {
	t       *Table
	terms   []boundTerm
	unknown []string
	// badDates are the date terms' values that aren't dates, as typed.
	badDates []string
}

type matchKind int

const (
	matchText    matchKind = iota // free text: the record's haystack
	matchColumn                   // one cell, substring
	matchStatus                   // the normalised status, prefix
	matchErrKind                  // ErrorKind of the error cell, prefix
	matchKey                      // a dead letter's effective key or key cell, substring
	matchAfter                    // the record's time, at or after one of times
	matchBefore                   // the record's time, before one of times
)

type boundTerm struct {
	neg  bool
	how  matchKind
	col  int
	alts []string
	// times are a date term's alternatives that parse; any: the term had only an empty one
	// (`after:`), which matches every row.
	times []time.Time
	any   bool
}

// Bind resolves the filter's field names against a table. A field the table doesn't have is
// recorded (Unknown) and its term searched as text ("is:new").
func (f Filter) Bind(t *Table) Matcher {
	m := Matcher{t: t}
	for _, tm := range f.terms {
		b := boundTerm{neg: tm.neg, how: matchText, col: -1, alts: tm.alts}
		if tm.name != "" {
			b.how, b.col = bindField(t, tm.name)
			if b.how == matchText {
				if !containsString(m.unknown, tm.name) {
					m.unknown = append(m.unknown, tm.name)
				}
				b.alts = make([]string, len(tm.alts))
				for i, a := range tm.alts {
					b.alts[i] = tm.name + ":" + a
				}
			}
			if b.how == matchAfter || b.how == matchBefore {
				m.bindDates(&b, tm.name)
			}
		}
		m.terms = append(m.terms, b)
	}
	return m
}

// bindDates parses a date term's alternatives in the tab's time zone.
func (m *Matcher) bindDates(b *boundTerm, name string) {
	for _, a := range b.alts {
		if a == "" {
			b.any = true
			continue
		}
		if tm, ok := ParseFilterDate(a, m.t.Location); ok {
			b.times = append(b.times, tm)
		} else {
			m.badDates = append(m.badDates, name+":"+a)
		}
	}
}

// filterDateLayouts are the dates after: and before: take, beside RFC 3339.
var filterDateLayouts = []string{"2006-01-02", "2006-01-02t15:04", "2006-01-02t15:04:05"}

// ParseFilterDate reads the value of an after: or before: term (lower case, as a filter holds
// it): RFC 3339 with its offset, else a date or a date and time in loc (UTC when nil).
func ParseFilterDate(s string, loc *time.Location) (time.Time, bool) {
	if loc == nil {
		loc = time.UTC
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s)); err == nil {
		return t, true
	}
	for _, l := range filterDateLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// DateProblem says which after:/before: values aren't dates and what a date looks like, ""
// when every one is (or there is none).
func (m Matcher) DateProblem() string {
	if len(m.badDates) == 0 {
		return ""
	}
	return "not a date: " + strings.Join(m.badDates, ", ") + " — after: and before: take 2026-01-31, 2026-01-31T12:00 or RFC 3339"
}

// bindField finds what a field name matches in t; matchText when it names nothing.
func bindField(t *Table, name string) (matchKind, int) {
	key := squash(name)
	if key == "kind" && schemaCol(t, key) < 0 && headerCol(t, key) < 0 {
		// kind: is the error's kind (ErrorKind: "503", "timeout"), for tabs with an error
		// column, unless the sheet has a column of that name (a queue's type is "kind").
		if i := errorCol(t); i >= 0 {
			return matchErrKind, i
		}
	}
	if key == string(FStatus) {
		return matchStatus, -1
	}
	if (key == "after" || key == "before") && schemaCol(t, key) < 0 && headerCol(t, key) < 0 {
		if key == "after" {
			return matchAfter, -1
		}
		return matchBefore, -1
	}
	if t.Config.Role == RoleDeadLetter && (key == string(FKey) || key == string(FID) && schemaCol(t, key) < 0 && headerCol(t, key) < 0) {
		return matchKey, t.Header.Col(FKey)
	}
	if i := schemaCol(t, key); i >= 0 {
		return matchColumn, i
	}
	if i := headerCol(t, key); i >= 0 {
		return matchColumn, i
	}
	return matchText, -1
}

// errorCol is the column kind: reads: a dead letter's error, a queue's lastError.
func errorCol(t *Table) int {
	if i := t.Header.Col(FError); i >= 0 {
		return i
	}
	return t.Header.Col(FLastError)
}

// Unknown lists the field names of the filter that name nothing in the table, as typed
// (lower case), in query order.
func (m Matcher) Unknown() []string { return m.unknown }

// Problem is the sentence that reports the unknown fields with the fields the tab has, ""
// when every field is known: `unknown field is: — fields here: name, email, …`.
func (m Matcher) Problem() string {
	if len(m.unknown) == 0 {
		return ""
	}
	what := "unknown field "
	if len(m.unknown) > 1 {
		what = "unknown fields "
	}
	return fmt.Sprintf("%s%s: — fields here: %s", what, strings.Join(m.unknown, ":, "), strings.Join(Fields(m.t), ", "))
}

// Fields lists the field names a filter can use on t, as they are typed: `status` first,
// `kind` where the tab has an error column, then each column in sheet order (the schema's
// field name, or the header in lower case with `_` for spaces), then a dead letter's `key`.
func Fields(t *Table) []string {
	out := []string{string(FStatus)}
	if how, _ := bindField(t, "kind"); how == matchErrKind {
		out = append(out, "kind")
	}
	byCol := map[int]Field{}
	for f, i := range t.Header.Index {
		byCol[i] = f
	}
	for i, h := range t.Header.Headers {
		name := string(byCol[i])
		if name == "" {
			name = strings.ReplaceAll(NormHeader(h), " ", "_")
		}
		if name != "" && !containsString(out, name) {
			out = append(out, name)
		}
	}
	if t.Config.Role == RoleDeadLetter && !containsString(out, string(FKey)) {
		out = append(out, string(FKey))
	}
	for _, d := range []string{"after", "before"} {
		if how, _ := bindField(t, d); how != matchText && !containsString(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Match reports whether a record passes every term. hay is the record's lower-cased text
// (see Haystack), passed in so callers can cache it across keystrokes. The common cases (free
// text, status) are tested inline: this loop runs for every row on every keystroke.
func (m Matcher) Match(r *Record, hay string) bool {
	for i := range m.terms {
		b := &m.terms[i]
		ok := false
		switch b.how {
		case matchText:
			if len(b.alts) == 1 {
				ok = strings.Contains(hay, b.alts[0])
				break
			}
			for _, a := range b.alts {
				if strings.Contains(hay, a) {
					ok = true
					break
				}
			}
		case matchStatus:
			if len(b.alts) == 1 {
				ok = strings.HasPrefix(r.Status, b.alts[0])
				break
			}
			for _, a := range b.alts {
				if strings.HasPrefix(r.Status, a) {
					ok = true
					break
				}
			}
		case matchAfter, matchBefore:
			ok = b.matchTime(r.Time)
		default:
			for _, a := range b.alts {
				if b.match(r, a) {
					ok = true
					break
				}
			}
		}
		if ok == b.neg {
			return false
		}
	}
	return true
}

// matchTime tests a date term: the time is at or after (before) one of its dates. A row
// without a time matches no date.
func (b *boundTerm) matchTime(tm time.Time) bool {
	if b.any {
		return true
	}
	if tm.IsZero() {
		return false
	}
	for _, d := range b.times {
		if (b.how == matchAfter) == !tm.Before(d) {
			return true
		}
	}
	return false
}

// match tests one alternative of a column, kind or key term.
func (b *boundTerm) match(r *Record, a string) bool {
	switch b.how {
	case matchErrKind:
		if b.col >= len(r.Cells) {
			return false
		}
		if a == "" {
			return strings.TrimSpace(r.Cells[b.col]) != ""
		}
		return strings.HasPrefix(ErrorKind(r.Cells[b.col]), a)
	case matchColumn:
		return b.col < len(r.Cells) && containsFold(r.Cells[b.col], a)
	case matchKey:
		return containsFold(r.ID, a) || (b.col >= 0 && b.col < len(r.Cells) && containsFold(r.Cells[b.col], a))
	}
	return false
}

// Haystack is the lower-cased text of a record that free-text terms search: every cell, its
// status and its problems, separated so a term can't match across cells.
func Haystack(r *Record) string {
	var b strings.Builder
	for _, c := range r.Cells {
		b.WriteString(c)
		b.WriteByte('\x1f')
	}
	b.WriteString(r.Status)
	for _, p := range r.Problems {
		b.WriteByte('\x1f')
		b.WriteString(p)
	}
	return strings.ToLower(b.String())
}

func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	if isASCIILower(s) {
		return strings.Contains(s, sub)
	}
	return strings.Contains(strings.ToLower(s), sub)
}

func isASCIILower(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || (c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// squash is a field name as compared: lower case, without spaces, `_` and `-`, so
// `claimed_by`, `claimedBy` and "claimed by" are one name.
func squash(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '_' || c == '-' || unicode.IsSpace(c) {
			return -1
		}
		return unicode.ToLower(c)
	}, s)
}

// headerCol finds a column by its header, compared squashed.
func headerCol(t *Table, key string) int {
	for i, h := range t.Header.Headers {
		if squash(h) == key {
			return i
		}
	}
	return -1
}

// schemaCol finds the column a filter field names through the role's schema: its field
// name, default header or any alias ("error" is a queue's lastError, "body" a payload), all
// compared squashed. -1 when the schema has no such field or the tab lacks its column.
func schemaCol(t *Table, key string) int {
	cols := SchemaFor(t.Config.Role).Columns
	for _, c := range cols {
		if squash(string(c.Field)) == key || squash(c.Header) == key {
			return t.Header.Col(c.Field)
		}
	}
	for _, c := range cols {
		for _, a := range c.Aliases {
			if squash(a) == key {
				return t.Header.Col(c.Field)
			}
		}
	}
	return -1
}

// HistorySearch is what of a filter a store that loads only part of its rows (a database:
// the open work) runs itself over the rest, in SQL with bound parameters: the statuses of
// the filter's status terms and the time range of its date terms. Its other terms, and its
// negated ones, then filter the rows the search returns.
type HistorySearch struct {
	// Statuses are the statuses a row may have (lower case, sorted); nil: any.
	Statuses []string
	// From and To keep the rows whose time is at or after From and before To; zero:
	// unbounded.
	From, To time.Time
	// Limit caps the rows, newest first (0: the store's default).
	Limit int
}

// IsZero reports whether the search selects by nothing (no status, no time).
func (h HistorySearch) IsZero() bool {
	return len(h.Statuses) == 0 && h.From.IsZero() && h.To.IsZero()
}

// Equal reports whether two searches select the same rows.
func (h HistorySearch) Equal(o HistorySearch) bool {
	return slices.Equal(h.Statuses, o.Statuses) && h.From.Equal(o.From) && h.To.Equal(o.To) && h.Limit == o.Limit
}

// History is the search the filter's positive status and date terms make. A status term's
// value stands for each of the tab's statuses it begins (status:deliv is delivered, status:d
// on a dead-letter tab dead, delivered and discarded), or for itself when it begins none of
// them; several status terms keep the statuses all of them allow. Several date terms keep
// the latest after: and the earliest before: (an OR of dates: its widest).
func (m Matcher) History() HistorySearch {
	var h HistorySearch
	var statuses []string
	seen := false
	for i := range m.terms {
		b := &m.terms[i]
		if b.neg {
			continue
		}
		switch {
		case b.how == matchStatus && !slices.Contains(b.alts, ""):
			set := m.statusesBegun(b.alts)
			if seen {
				set = slices.DeleteFunc(set, func(s string) bool { return !slices.Contains(statuses, s) })
			}
			statuses, seen = set, true
		case (b.how == matchAfter || b.how == matchBefore) && !b.any && len(b.times) > 0:
			widest := slices.MinFunc(b.times, time.Time.Compare)
			if b.how == matchBefore {
				widest = slices.MaxFunc(b.times, time.Time.Compare)
				if h.To.IsZero() || widest.Before(h.To) {
					h.To = widest
				}
			} else if widest.After(h.From) {
				h.From = widest
			}
		}
	}
	if seen {
		slices.Sort(statuses)
		h.Statuses = slices.Compact(statuses)
		if h.Statuses == nil {
			h.Statuses = []string{}
		}
	}
	return h
}

// statusesBegun is the tab's statuses (its list and the role's defaults) that one of alts
// begins, and each alternative that begins none of them as it is.
func (m Matcher) statusesBegun(alts []string) []string {
	known := slices.Concat(m.t.Statuses, DefaultStatuses(m.t.Config.Role))
	var out []string
	for _, a := range alts {
		found := false
		for _, s := range known {
			if s = NormStatus(m.t.Config.Role, s); strings.HasPrefix(s, a) {
				out, found = append(out, s), true
			}
		}
		if !found {
			out = append(out, a)
		}
	}
	return out
}
