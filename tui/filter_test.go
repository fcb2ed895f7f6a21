package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

func TestFilter(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "/")
	typeText(m, "status:new")
	ts := m.tabs.current()
	if len(ts.visible) != 10 {
		t.Errorf("status:new shows %d rows, want 10 (5 blank + 5 new)", len(ts.visible))
	}
	if !m.prompt.open || !strings.Contains(plainScreen(m), "/ status:new") {
		t.Errorf("the prompt should show the live query:\n%s", plainScreen(m))
	}
	if v := m.View(); v.Cursor == nil || v.Cursor.Y != 23 {
		t.Errorf("the terminal cursor should sit in the prompt on the last line, got %+v", v.Cursor)
	}
	typeText(m, " grace")
	if len(ts.visible) != 1 || cursorID(m) != "msg-001" {
		t.Errorf("status:new grace shows %d rows, want 1 (msg-001)", len(ts.visible))
	}
	keys(m, "enter")
	if m.prompt.open || ts.filter.query != "status:new grace" {
		t.Errorf("enter keeps the filter: filtering=%v query=%q", m.prompt.open, ts.filter.query)
	}
	if !strings.Contains(plainScreen(m), "1/1 of 30 · filter status:new grace") {
		t.Errorf("status bar should show the position and the filter:\n%s", plainScreen(m))
	}
	keys(m, "/")
	for range len(" grace") {
		keys(m, "backspace")
	}
	typeText(m, " !read !Ada")
	for _, ri := range ts.visible {
		r := ts.data.table.Records[ri]
		if r.Status != "new" || strings.Contains(strings.ToLower(strings.Join(r.Cells, " ")), "ada") {
			t.Errorf("row %d (%s, %v) should not pass status:new !read !Ada", r.Row, r.Status, r.Cells[1])
		}
	}
	keys(m, "esc")
	if m.prompt.open || ts.filter.query != "" || len(ts.visible) != 30 {
		t.Errorf("esc clears the filter: filtering=%v query=%q rows=%d", m.prompt.open, ts.filter.query, len(ts.visible))
	}
	keys(m, "/")
	typeText(m, "zzzz-nothing")
	if !strings.Contains(plainScreen(m), "No rows match zzzz-nothing") {
		t.Errorf("an empty result says so:\n%s", plainScreen(m))
	}
}

// TestNarrowingMatchesFullScan types and deletes queries and checks every intermediate
// result against a fresh full scan: narrowing must be an optimisation, never a change.
func TestNarrowingMatchesFullScan(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	ts := m.tabs.current()
	check := func(step string) {
		t.Helper()
		want := ts.data.match(model.ParseFilter(ts.filter.query), ts.data.order)
		if len(want) != len(ts.visible) {
			t.Fatalf("%s: query %q shows %d rows, a full scan finds %d", step, ts.filter.query, len(ts.visible), len(want))
		}
		for i := range want {
			if want[i] != ts.visible[i] {
				t.Fatalf("%s: query %q row %d differs from a full scan", step, ts.filter.query, i)
			}
		}
	}
	keys(m, "/")
	for _, q := range []string{"status:new", "!ad", "sour", "email:gra", "status:ne", "ada grace", "!e",
		"status:new|read", `"from ada"`, "name:ada|gr", "!name:ad|gr", `"a|b" status:r|n`, "is:new"} {
		for _, r := range q {
			typeText(m, string(r))
			check("typing")
		}
		for range q {
			keys(m, "backspace")
			check("deleting")
		}
	}
}

// visibleIDs is the IDs of the rows the active tab shows, sorted (the display order is the
// table's business; the filter decides which rows).
func visibleIDs(m *Model) string {
	ts := m.tabs.current()
	ids := make([]string, 0, len(ts.visible))
	for _, ri := range ts.visible {
		ids = append(ids, ts.data.table.Records[ri].ID)
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// TestFilterTypedOnEveryTab types queries into the filter prompt of each tab, one key at a
// time as a person does (so the narrowing cache is in play), and checks the rows shown and
// what the status bar says about unknown fields.
func TestFilterTypedOnEveryTab(t *testing.T) {
	cases := []struct {
		tab, query, ids string
		problem         string // "" = the status bar says nothing about fields
	}{
		{"1", "status:n", "msg-000 msg-001 msg-006 msg-007 msg-012 msg-013 msg-018 msg-019 msg-024 msg-025", ""},
		{"1", "status:new|read !name:ada|grace|alan|edsger|barbara|donald|ken|radia|leslie", "msg-006 msg-026", ""}, // Margaret (16 is done)
		{"1", `"from ada"`, "msg-000 msg-010 msg-020", ""},
		{"1", "name:ada|grace", "msg-000 msg-001 msg-010 msg-011 msg-020 msg-021", ""},
		{"1", "!status:new|read name:ada", "msg-010", ""},
		{"1", "is:new", "", "unknown field is: — fields here: status, timestamp, name, email, message, id, notes"},
		{"2", "status:d", "k-1 k-3 k-4", ""},
		{"2", "source:crm kind:503", "k-1", ""},
		{"2", "kind:503|timeout", "k-1 k-3", ""},
		{"2", "!status:de", "k-2", ""},
		{"2", "https://mail", "k-3 k-4", ""},
		{"2", `"email invalid"`, "k-2", ""},
		{"2", "type:email", "", "unknown field type: — fields here: status, kind, timestamp, source, url,"},
		{"3", "status:error|claimed", "job-2 job-3", ""},
		{"3", "type:em !status:d", "job-1 job-2", ""},
		{"3", "kind:exp", "job-3", ""},
		{"3", "source:x", "", "unknown field source: — fields here: status, id, type, payload,"},
	}
	for _, c := range cases {
		m := newLoaded(t, testWorkbook(t), 120, 40)
		keys(m, c.tab, "/")
		typeText(m, c.query)
		if got := visibleIDs(m); got != c.ids {
			t.Errorf("tab %s %q shows [%s], want [%s]", c.tab, c.query, got, c.ids)
		}
		lines := strings.Split(plainScreen(m), "\n")
		note := strings.Join(lines[len(lines)-4:len(lines)-1], "\n") // the lines above the prompt
		if c.problem == "" && strings.Contains(note, "unknown field") || !strings.Contains(note, c.problem) {
			t.Errorf("tab %s %q: note %q, want %q", c.tab, c.query, note, c.problem)
		}
		// The note stays with a kept filter, and fixing the query takes it away.
		if c.problem != "" {
			keys(m, "enter")
			if !strings.Contains(plainScreen(m), "unknown field") {
				t.Errorf("tab %s: the note goes with enter, though the filter is kept:\n%s", c.tab, plainScreen(m))
			}
			keys(m, "/")
			for range c.query + " " { // the prompt reopens on the filter and a space
				keys(m, "backspace")
			}
			typeText(m, "status:")
			if strings.Contains(plainScreen(m), "unknown field") {
				t.Errorf("tab %s: the note stays after the query is fixed:\n%s", c.tab, plainScreen(m))
			}
		}
	}
}
