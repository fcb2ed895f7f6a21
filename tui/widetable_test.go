package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// ctrl+w shows every column of the sheet with its cells whole (the inbox's ID, which the
// table leaves out, and a message the table cuts); wider than the screen it scrolls sideways
// with the gutter staying put; ctrl+w again is the tab's own columns.
func TestWideView(t *testing.T) {
	wb := testWorkbook(t)
	long := "a message much longer than the table's message column ever shows at eighty columns, ending in ZEBRA"
	wb.Tabs[0].Records[0].Cells[wb.Tabs[0].Header.Col(model.FMessage)] = long
	m := newLoaded(t, wb, 80, 24)
	if strings.Contains(plainScreen(m), "ZEBRA") {
		t.Fatal("the table shows the whole message already")
	}
	keys(m, "ctrl+w")
	ts := m.tabs.current()
	if !ts.wide {
		t.Fatal("ctrl+w: no wide view")
	}
	out := plainScreen(m)
	if !strings.Contains(out, "wide") {
		t.Errorf("the status bar doesn't say wide:\n%s", out)
	}
	head := strings.Split(out, "\n")[m.geo.headerH]
	if !strings.Contains(head, "AGE ▲") || !strings.Contains(head, "NAME") {
		t.Errorf("the wide header is not the sheet's columns in its order: %q", head)
	}
	for range 20 {
		keys(m, "l")
	}
	out = plainScreen(m)
	if !strings.Contains(out, "ZEBRA") {
		t.Errorf("scrolled right, the wide view doesn't show the whole message:\n%s", out)
	}
	if !strings.Contains(strings.Split(out, "\n")[m.geo.headerH], "ID") {
		t.Errorf("scrolled right, the last column (ID) isn't there:\n%s", out)
	}
	for _, l := range strings.Split(screen(m), "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d cells at 80 columns: %q", w, ansi.Strip(l))
		}
	}
	keys(m, "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h", "h")
	if ts.xoff != 0 {
		t.Errorf("h back to the left edge: xoff %d", ts.xoff)
	}
	keys(m, "ctrl+w")
	if ts.wide || strings.Contains(plainScreen(m), "ZEBRA") {
		t.Error("ctrl+w again isn't the tab's own table")
	}
}

// [tabs.ROLE] table = [...] picks the table's columns and their order: the role's by title or
// field, any other of the sheet's by its header; a name the sheet lacks is left out.
func TestTableColumnsFromTheConfig(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[0].Config.TableColumns = []string{"message", "Status", "id", "nope"}
	d := prepare(wb.Tabs[0])
	var titles []string
	for _, c := range d.cols {
		titles = append(titles, c.title)
	}
	if got := strings.Join(titles, " "); got != "MESSAGE STATUS ID" {
		t.Errorf("columns %q, want MESSAGE STATUS ID", got)
	}
	m := newLoaded(t, wb, 100, 30)
	head := strings.Fields(strings.Split(plainScreen(m), "\n")[m.geo.headerH])
	if strings.Join(head, " ") != "MESSAGE STATUS ID" {
		t.Errorf("the table's header: %q", head)
	}
}

// A name in the table list that the sheet has no column for is said once, as a toast.
func TestTableColumnsUnknownIsSaid(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[0].Config.TableColumns = []string{"message", "nope"}
	m := newLoaded(t, wb, 100, 30)
	if !strings.Contains(toastTexts(m), "left out: nope") {
		t.Errorf("toasts %q", toastTexts(m))
	}
}
