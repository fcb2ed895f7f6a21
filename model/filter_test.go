package model

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// filterWorkbook is three small tabs (Inbox, failed_calls, Jobs) whose rows are named by
// their ID so a test reads as "this query shows these rows".
func filterWorkbook(t *testing.T) map[string]*Table {
	t.Helper()
	decode := func(r Role, rows [][]any) *Table {
		tb, err := Decode(DefaultTabConfig(r), rows, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	return map[string]*Table{
		"Inbox": decode(RoleInbox, [][]any{
			{"Timestamp", "Name", "Email", "Message", "Status", "ID", "Plan Tier"},
			{"2024-05-01 10:00", "Ada Lovelace", "ada@acme.io", "Please call me back at 12:30", "", "m1", "gold"},
			{"2024-05-01 11:00", "Grace Hopper", "grace@navy.mil", "Re:hello — see https://example.com/x", "read", "m2", ""},
			{"2024-05-02 09:00", "Spam Bot", "bot@spam.biz", "cheap pills", "spam", "m3", ""},
			{"2024-05-02 10:00", "Alan Turing", "alan@acme.io", "call me maybe", "replied", "m4", "silver"},
			{"2024-05-03 10:00", "Nina", "nina@news.org", "newsletter: read it", "New", "m5", ""},
			{"2024-05-03 11:00", "Olga", "olga@x.org", "two words here", "done", "m6", "gold"},
		}),
		"failed_calls": decode(RoleDeadLetter, [][]any{
			{"timestamp", "source", "url", "payload", "error", "status", "key"},
			{"2024-05-01", "crm", "https://crm.example/hook", `{"id":1}`, "503 Service Unavailable from crm", "", "k1"},
			{"2024-05-01", "crm", "https://crm.example/hook", `{"id":2}`, "no answer from crm within 20s (timeout)", "dead", "k2"},
			{"2024-05-02", "billing", "http://127.0.0.1:8080/pay", `{"id":3}`, "401 Unauthorized", "rejected", "k3"},
			{"2024-05-02", "billing", "http://127.0.0.1:8080/pay", `{"id":4}`, "", "delivered", "k4"},
			{"2024-05-03", "crm-eu", "https://eu.crm.example/hook", `{"id":5}`, "HTTP 503", "discarded", "k5"},
		}),
		"Jobs": decode(RoleQueue, [][]any{
			{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError"},
			{"j1", "send-email", `{"to":"a@x"}`, "pending", "", "", ""},
			{"j2", "send-email", `{"to":"b@x"}`, "claimed", "worker-1", "2024-05-01 10:00", ""},
			{"j3", "resize", `{"w":10}`, "error", "", "", "503 from images"},
			{"j4", "resize", `{"w":20}`, "done", "", "", ""},
			{"j5", "send-sms", `{"to":"+1"}`, "error", "", "", "connection refused"},
			{"j6", "report", `{}`, "", "", "", "timeout"},
		}),
	}
}

// idsMatching is the IDs of the rows of tb that q matches, in sheet order.
func idsMatching(tb *Table, q string) []string {
	m := ParseFilter(q).Bind(tb)
	ids := []string{}
	for i := range tb.Records {
		if m.Match(&tb.Records[i], Haystack(&tb.Records[i])) {
			ids = append(ids, tb.Records[i].ID)
		}
	}
	return ids
}

// TestFilterLanguage is the filter language as a table: a query on one tab and the rows it
// shows, and the fields it reports as unknown.
func TestFilterLanguage(t *testing.T) {
	wb := filterWorkbook(t)
	cases := []struct {
		tab, q  string
		ids     string // space-separated IDs, "" for none
		unknown string // comma-separated unknown fields
	}{
		// Inbox.
		{"Inbox", "", "m1 m2 m3 m4 m5 m6", ""},
		{"Inbox", "status:n", "m1 m5", ""}, // prefix of the normalised status; blank is new
		{"Inbox", "status:ne", "m1 m5", ""},
		{"Inbox", "status:new", "m1 m5", ""},
		{"Inbox", "STATUS:NEW", "m1 m5", ""},
		{"Inbox", "status:re", "m2 m4", ""}, // read and replied
		{"Inbox", "status:new|read", "m1 m2 m5", ""},
		{"Inbox", "status:new|", "m1 m5", ""}, // an empty alternative while typing adds nothing
		{"Inbox", "!status:new|read", "m3 m4 m6", ""},
		{"Inbox", "!spam", "m1 m2 m4 m5 m6", ""},
		{"Inbox", "email:@acme", "m1 m4", ""},
		{"Inbox", "email:acme|navy", "m1 m2 m4", ""},
		{"Inbox", "name:ada", "m1", ""},
		{"Inbox", "name:love", "m1", ""}, // other fields: anywhere in the cell
		{"Inbox", `"call me"`, "m1 m4", ""},
		{"Inbox", `"call me`, "m1 m4", ""}, // unclosed quote: the rest is the phrase
		{"Inbox", `message:"two words"`, "m6", ""},
		{"Inbox", `!"call me"`, "m2 m3 m5 m6", ""},
		{"Inbox", "12:30", "m1", ""},               // a time is text
		{"Inbox", "https://example.com", "m2", ""}, // a URL is text
		{"Inbox", "http:", "", ""},                 // so is a scheme alone (no http: here)
		{"Inbox", `"re:hello"`, "m2", ""},          // quoted: text, no field
		{"Inbox", "re:hello", "m2", "re"},          // unknown field: reported, searched as text
		{"Inbox", "is:new", "", "is"},              // reported, and nothing has the text
		{"Inbox", "!is:new", "m1 m2 m3 m4 m5 m6", "is"},
		{"Inbox", "kind:503", "", "kind"},        // no error column in an inbox
		{"Inbox", "plan_tier:gold", "m1 m6", ""}, // an extra column, spaces as _
		{"Inbox", "plantier:silver|gold", "m1 m4 m6", ""},
		{"Inbox", "mail:olga", "m6", ""}, // an alias of email
		{"Inbox", "call !alan", "m1", ""},
		{"Inbox", "newsletter: status:new", "m5", "newsletter"},
		// Dates: after: is at or after, before: is before; a date is midnight in the tab's zone.
		{"Inbox", "after:2024-05-02", "m3 m4 m5 m6", ""},
		{"Inbox", "before:2024-05-02", "m1 m2", ""},
		{"Inbox", "after:2024-05-02 before:2024-05-03", "m3 m4", ""},
		{"Inbox", "after:2024-05-02T10:00", "m4 m5 m6", ""},
		{"Inbox", "after:2024-05-01T10:30:00Z before:2024-05-02T09:30:00+00:00", "m2 m3", ""},
		{"Inbox", "AFTER:2024-05-03T10:00:00", "m5 m6", ""},
		{"Inbox", "after:2024-05-03|2024-05-02", "m3 m4 m5 m6", ""}, // OR: the widest
		{"Inbox", "!after:2024-05-02", "m1 m2", ""},
		{"Inbox", "after:", "m1 m2 m3 m4 m5 m6", ""}, // while typing: every row
		{"Inbox", "after:2024-05", "", ""},           // not a date (yet): nothing
		{"Inbox", "before:2024-05-02 status:new|read", "m1 m2", ""},
		// failed_calls.
		{"failed_calls", "status:d", "k1 k2 k4 k5", ""}, // dead (blank too), delivered, discarded
		{"failed_calls", "status:dead", "k1 k2", ""},
		{"failed_calls", "source:cr", "k1 k2 k5", ""},
		{"failed_calls", "source:crm|billing", "k1 k2 k3 k4 k5", ""},
		{"failed_calls", "source:crm kind:503", "k1 k5", ""},
		{"failed_calls", "source:crm kind:5", "k1 k5", ""},
		{"failed_calls", "kind:503|timeout", "k1 k2 k5", ""},
		{"failed_calls", "kind:t", "k2", ""},
		{"failed_calls", "kind:", "k1 k2 k3 k5", ""}, // any error
		{"failed_calls", "!kind:", "k4", ""},
		{"failed_calls", "!status:discarded", "k1 k2 k3 k4", ""},
		{"failed_calls", "source:crm kind:503|timeout !status:discarded", "k1 k2", ""},
		{"failed_calls", "timeout|503", "k1 k2 k5", ""},
		{"failed_calls", "url:127.0.0.1:8080", "k3 k4", ""},
		{"failed_calls", "http://127.0.0.1:8080", "k3 k4", ""},
		{"failed_calls", "key:k3", "k3", ""},
		{"failed_calls", "id:k4", "k4", ""}, // a dead letter's id is its key
		{"failed_calls", `error:"service unavailable"`, "k1", ""},
		{"failed_calls", "type:x", "", "type"},
		// Jobs.
		{"Jobs", "status:error|claimed", "j2 j3 j5", ""},
		{"Jobs", "status:p", "j1 j6", ""}, // blank is pending
		{"Jobs", "type:send", "j1 j2 j5", ""},
		{"Jobs", "type:send !type:sms", "j1 j2", ""},
		{"Jobs", "kind:resize", "j3 j4", ""}, // a queue's "kind" is its type column
		{"Jobs", "error:503", "j3", ""},      // error is lastError
		{"Jobs", "last_error:refused|timeout", "j5 j6", ""},
		{"Jobs", "claimed_by:worker", "j2", ""},
		{"Jobs", "claimedBy:worker", "j2", ""},
		{"Jobs", `payload:"to"`, "j1 j2 j5", ""},
		{"Jobs", `"to":"a`, "", ""}, // a quote can't be searched for: this is the text to:a
		{"Jobs", "source:crm", "", "source"},
		{"Jobs", "!status:done|error", "j1 j2 j6", ""},
		{"Jobs", "resize|report status:d|p", "j4 j6", ""},
		{"Jobs", "before:2025-01-01", "j2", ""}, // a job's time is its claim; no claim, no time
		{"Jobs", "!before:2025-01-01", "j1 j3 j4 j5 j6", ""},
	}
	for _, c := range cases {
		tb := wb[c.tab]
		want := strings.Fields(c.ids)
		if want == nil {
			want = []string{}
		}
		if got := idsMatching(tb, c.q); !slices.Equal(got, want) {
			t.Errorf("%s %q: shows %v, want %v", c.tab, c.q, got, want)
		}
		var wantUnknown []string
		if c.unknown != "" {
			wantUnknown = strings.Split(c.unknown, ",")
		}
		if got := ParseFilter(c.q).Bind(tb).Unknown(); !slices.Equal(got, wantUnknown) {
			t.Errorf("%s %q: unknown fields %v, want %v", c.tab, c.q, got, wantUnknown)
		}
	}
}

func TestFilterProblemNamesTheTabsFields(t *testing.T) {
	wb := filterWorkbook(t)
	if p := ParseFilter("status:new").Bind(wb["Inbox"]).Problem(); p != "" {
		t.Errorf("known fields: %q", p)
	}
	p := ParseFilter("is:new x foo:1 is:read").Bind(wb["Inbox"]).Problem()
	want := "unknown fields is:, foo: — fields here: status, timestamp, name, email, message, id, plan_tier, after, before"
	if p != want {
		t.Errorf("problem\n got %q\nwant %q", p, want)
	}
	if got := strings.Join(Fields(wb["failed_calls"]), ", "); got != "status, kind, timestamp, source, url, payload, error, key, after, before" {
		t.Errorf("dead-letter fields: %s", got)
	}
	if got := strings.Join(Fields(wb["Jobs"]), ", "); got != "status, id, type, payload, claimedby, claimedat, lasterror, after, before" {
		t.Errorf("queue fields: %s", got)
	}
}

// TestFilterNarrowsIsSound checks Narrows against the rows: for random pairs of queries where
// Narrows says the second is narrower, every row it matches is matched by the first, on every
// tab. Queries are built from pieces of the language (fields, OR, quotes, negation, prefixes).
func TestFilterNarrowsIsSound(t *testing.T) {
	wb := filterWorkbook(t)
	rng := rand.New(rand.NewPCG(9, 9))
	fields := []string{"", "", "", "status:", "source:", "kind:", "type:", "email:", "is:", "!", "!status:", "!kind:", "after:2024-05-0", "!before:2024-05-0"}
	chars := []string{"n", "e", "w", "r", "d", "c", "m", "s", "t", "a", "5", "0", "3", "@", "|", "|", "\"", " ", ":", "!", "/"}
	word := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(chars[rng.IntN(len(chars))])
		}
		return b.String()
	}
	randomQuery := func() string {
		var terms []string
		for range 1 + rng.IntN(3) {
			terms = append(terms, fields[rng.IntN(len(fields))]+word())
		}
		return strings.Join(terms, " ")
	}
	checked := 0
	for range 50000 {
		prev := randomQuery()
		var next string
		switch rng.IntN(4) {
		case 0: // typing on, as a person does
			next = prev + word()
		case 1: // typing in the middle (the cursor moved back)
			at := rng.IntN(len(prev) + 1)
			next = prev[:at] + chars[rng.IntN(len(chars))] + prev[at:]
		case 2: // deleting a character
			if prev == "" {
				continue
			}
			at := rng.IntN(len(prev))
			next = prev[:at] + prev[at+1:]
		default:
			next = randomQuery()
		}
		if !ParseFilter(next).Narrows(ParseFilter(prev)) {
			continue
		}
		checked++
		for name, tb := range wb {
			p := idsMatching(tb, prev)
			for _, id := range idsMatching(tb, next) {
				if !slices.Contains(p, id) {
					t.Fatalf("%s: Narrows(%q, %q) but %s matches only the second", name, next, prev, id)
				}
			}
		}
	}
	if checked < 10000 {
		t.Errorf("only %d narrowing pairs checked", checked)
	}
}

func TestFilterNarrows(t *testing.T) {
	cases := []struct {
		next, prev string
		want       bool
	}{
		{"ab", "a", true},
		{"a b", "a", true},
		{"source:crm", "source:cr", true},
		{"status:ne", "status:n", true}, // prefix: the longer prefix is narrower
		{"status:new", "status:", true},
		{"status:re", "status:e", false}, // but not a longer substring: status matches by prefix
		{"kind:503", "kind:03", false},
		{"xcrm", "crm", true},  // free text matches anywhere
		{"!abc", "!ab", false}, // a negation matches more as it grows
		{"!ab", "!abc", true},
		{"source:x", "sour", false},
		{"a", "ab", false},
		{"status:new|r", "status:new|", false}, // a new alternative widens
		{"status:new|read", "status:new|re", true},
		{"a|bc", "a|b", true},
		{"!a|bc", "!a|b", false},
		{"!a|b", "!a|", true},
		{`"call me`, `"call m`, true},
		{`"call me" x`, `"call me"`, true},
		{`"ab|c`, `"ab`, true}, // inside quotes | is text
		{"is:new", "is:ne", true},
		{"kind:503", "kind:", true},
		{"!kind:503", "!kind:", false},
		{"b a", "a b", true}, // order of terms doesn't matter
		{"Status:NEW", "status:n", true},
		// as a person types in the TUI's filter prompt
		{"a b", "a ", true},
		{"status:new", "status:ne", true},
		{"Status:new", "Status:ne", true},
		{"x b", "a b", false},
		{"ab c", "a", true},
		{"!a b", "!a", true}, // another term on a negated one: still only narrower
		{"status:new|re", "status:new|r", true},
		{`"call me`, `"call`, true},
		{`"call|x`, `"call`, true},
		{`call|x`, `call`, false},
	}
	for _, c := range cases {
		if got := ParseFilter(c.next).Narrows(ParseFilter(c.prev)); got != c.want {
			t.Errorf("Narrows(%q, %q) = %v, want %v", c.next, c.prev, got, c.want)
		}
	}
}

// A tab with a column called after or before searches the column: the date terms don't take
// a name the sheet uses.
func TestFilterDateNamesYieldToColumns(t *testing.T) {
	tb, err := Decode(DefaultTabConfig(RoleInbox), [][]any{
		{"Timestamp", "Name", "Email", "Message", "Status", "ID", "Before"},
		{"2024-05-01 10:00", "Ada", "a@x", "hi", "", "m1", "lunch"},
		{"2024-05-03 10:00", "Bob", "b@x", "hi", "", "m2", ""},
	}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsMatching(tb, "before:lunch"); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("before:lunch shows %v", got)
	}
	if got := idsMatching(tb, "after:2024-05-02"); !slices.Equal(got, []string{"m2"}) {
		t.Errorf("after: shows %v", got)
	}
	if got := strings.Join(Fields(tb), ", "); !strings.HasSuffix(got, "before, after") {
		t.Errorf("fields: %s", got)
	}
}

// A date is read in the tab's time zone, unless it carries its own offset.
func TestFilterDatesInTheTabsZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	tb, err := Decode(DefaultTabConfig(RoleDeadLetter), [][]any{
		{"timestamp", "source", "url", "payload", "error", "status", "key"},
		{"2024-05-01 22:00", "crm", "u", "{}", "", "", "k1"}, // 02:00 UTC on the 2nd
	}, ny)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsMatching(tb, "after:2024-05-02"); len(got) != 0 {
		t.Errorf("after:2024-05-02 (New York) shows %v", got)
	}
	if got := idsMatching(tb, "after:2024-05-02T00:00:00Z"); !slices.Equal(got, []string{"k1"}) {
		t.Errorf("after:2024-05-02T00:00:00Z shows %v", got)
	}
}

// DateProblem names the values that aren't dates, and nothing when all are.
func TestFilterDateProblem(t *testing.T) {
	wb := filterWorkbook(t)
	if p := ParseFilter("after:2024-05-01 before:").Bind(wb["Inbox"]).DateProblem(); p != "" {
		t.Errorf("good dates: %q", p)
	}
	p := ParseFilter("after:2024-5-1 before:soon").Bind(wb["Inbox"]).DateProblem()
	if !strings.Contains(p, "after:2024-5-1, before:soon") || !strings.Contains(p, "2026-01-31") {
		t.Errorf("problem %q", p)
	}
	if p := ParseFilter("after:soon").Bind(wb["Inbox"]).Problem(); p != "" {
		t.Errorf("a bad date is no unknown field: %q", p)
	}
}

// History is the part of a filter a store runs over the rows it didn't load: the statuses
// the positive status terms begin, and the range of the positive date terms.
func TestFilterHistory(t *testing.T) {
	wb := filterWorkbook(t)
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		tab, q   string
		statuses []string
		from, to time.Time
	}{
		{"failed_calls", "", nil, time.Time{}, time.Time{}},
		{"failed_calls", "crm !status:dead kind:503", nil, time.Time{}, time.Time{}},
		{"failed_calls", "status:delivered", []string{"delivered"}, time.Time{}, time.Time{}},
		{"failed_calls", "status:deliv", []string{"delivered"}, time.Time{}, time.Time{}},
		{"failed_calls", "status:d", []string{"dead", "delivered", "discarded"}, time.Time{}, time.Time{}},
		{"failed_calls", "status:delivered|rejected crm", []string{"delivered", "rejected"}, time.Time{}, time.Time{}},
		{"failed_calls", "status:archived", []string{"archived"}, time.Time{}, time.Time{}}, // a status of its own
		{"failed_calls", "status:d status:de", []string{"dead", "delivered"}, time.Time{}, time.Time{}},
		{"failed_calls", "status:", nil, time.Time{}, time.Time{}},
		{"failed_calls", "after:2026-01-02", nil, day(2), time.Time{}},
		{"failed_calls", "after:2026-01-02 before:2026-01-05 status:delivered", []string{"delivered"}, day(2), day(5)},
		{"failed_calls", "after:2026-01-02 after:2026-01-03|2026-01-01", nil, day(2), time.Time{}},
		{"failed_calls", "before:2026-01-05 before:2026-01-04|2026-01-07", nil, time.Time{}, day(5)},
		{"failed_calls", "!after:2026-01-02 after:soon", nil, time.Time{}, time.Time{}},
		{"Inbox", "status:re", []string{"read", "replied"}, time.Time{}, time.Time{}},
		{"Jobs", "status:done before:2026-01-03", []string{"done"}, time.Time{}, day(3)},
	}
	for _, c := range cases {
		h := ParseFilter(c.q).Bind(wb[c.tab]).History()
		want := HistorySearch{Statuses: c.statuses, From: c.from, To: c.to}
		if !h.Equal(want) || h.IsZero() != want.IsZero() {
			t.Errorf("%s %q: %+v, want %+v", c.tab, c.q, h, want)
		}
	}
	if !(HistorySearch{}).IsZero() || (HistorySearch{From: day(1)}).IsZero() || (HistorySearch{Statuses: []string{"x"}}).Equal(HistorySearch{Statuses: []string{"x"}, Limit: 1}) {
		t.Error("IsZero/Equal")
	}
}

// A date term narrows only itself: after:2026-0 (no date yet) doesn't narrow to a date.
func TestFilterDatesDontNarrowByPrefix(t *testing.T) {
	for _, c := range []struct {
		prev, next string
		want       bool
	}{
		{"after:2026-0", "after:2026-01-01", false},
		{"after:2026-01-01", "after:2026-01-01 crm", true},
		{"before:2026-01-01", "before:2026-01-011", false},
		{"crm", "crm after:2026-01-01", true},
	} {
		if got := ParseFilter(c.next).Narrows(ParseFilter(c.prev)); got != c.want {
			t.Errorf("%q → %q narrows: %v, want %v", c.prev, c.next, got, c.want)
		}
	}
}
