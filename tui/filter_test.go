package tui

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

func TestFilter(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "/")
	typeText(m, "status:new")
	ts := m.activeTab()
	if len(ts.visible) != 10 {
		t.Errorf("status:new shows %d rows, want 10 (5 blank + 5 new)", len(ts.visible))
	}
	if !m.filtering || !strings.Contains(plainScreen(m), "/ status:new") {
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
	if m.filtering || ts.filter.query != "status:new grace" {
		t.Errorf("enter keeps the filter: filtering=%v query=%q", m.filtering, ts.filter.query)
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
	if m.filtering || ts.filter.query != "" || len(ts.visible) != 30 {
		t.Errorf("esc clears the filter: filtering=%v query=%q rows=%d", m.filtering, ts.filter.query, len(ts.visible))
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
	ts := m.activeTab()
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
	for _, q := range []string{"status:new", "!ad", "sour", "email:gra", "status:ne", "ada grace", "!e"} {
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

func TestNarrows(t *testing.T) {
	cases := []struct {
		next, prev string
		want       bool
	}{
		{"ab", "a", true},
		{"a b", "a", true},
		{"a b", "a ", true},
		{"source:crm", "source:cr", true},
		{"status:new", "status:ne", false}, // exact match
		{"Status:new", "Status:ne", false},
		{"!abc", "!ab", false}, // negation matches more as it grows
		{"source:x", "sour", false},
		{"a", "ab", false},
		{"x b", "a b", false},
		{"ab c", "a", true},
		{"!a b", "!a", true}, // another term on a negated one: still only narrower
	}
	for _, c := range cases {
		if got := narrows(c.next, c.prev); got != c.want {
			t.Errorf("narrows(%q, %q) = %v, want %v", c.next, c.prev, got, c.want)
		}
	}
}
