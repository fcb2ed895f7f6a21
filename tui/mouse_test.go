package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// With the mouse on, a click on a tab shows it, on a column title sorts by it (again: the
// other way round), on a row puts the cursor there, and on the cursor row opens it; over a
// dialog it does nothing.
func TestMouseClicks(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Mouse = true })
	click := func(x, y int) { t.Helper(); send(m, tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft}) }
	lines := strings.Split(plainScreen(m), "\n")
	// The second tab's label, on the tab bar (line 1).
	x := strings.Index(lines[1], "failed_calls")
	if x < 0 {
		t.Fatalf("no failed_calls tab:\n%s", lines[1])
	}
	click(len([]rune(lines[1][:x]))+2, 1)
	if m.tabs.active != 1 {
		t.Fatalf("a click on the second tab shows tab %d", m.tabs.active+1)
	}
	click(2, 1)
	if m.tabs.active != 0 {
		t.Fatalf("a click on the first tab shows tab %d", m.tabs.active+1)
	}
	// A column title: the NAME column sorts by name, a second click the other way.
	lines = strings.Split(plainScreen(m), "\n")
	head := m.geo.headerH
	nx := strings.Index(lines[head], "NAME")
	if nx < 0 {
		t.Fatalf("no NAME title on line %d:\n%s", head, plainScreen(m))
	}
	click(nx+1, head)
	ts := m.tabs.current()
	if ts.sort.col < 0 || ts.data.cols[ts.sort.col].title != "NAME" || ts.sort.desc {
		t.Fatalf("a click on NAME sorts by %+v", ts.sort)
	}
	click(nx+1, head)
	if !ts.sort.desc {
		t.Error("a second click on NAME doesn't sort the other way")
	}
	// A row: the cursor goes there; on the cursor row a click opens it.
	click(10, head+3)
	if ts.cursor != ts.offset+2 {
		t.Fatalf("a click on the third row put the cursor on %d", ts.cursor)
	}
	if m.detail != nil {
		t.Fatal("the first click on a row opened it")
	}
	click(10, head+3)
	if m.detail == nil {
		t.Fatal("a click on the cursor row didn't open it")
	}
	keys(m, "esc")
	// Over a dialog, nothing.
	keys(m, "s")
	cur := ts.cursor
	click(10, head+5)
	if ts.cursor != cur || m.dialog == nil {
		t.Error("a click went through the status picker to the table")
	}
}
