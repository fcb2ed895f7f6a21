package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

func viewsWorkbook(t *testing.T) *model.Workbook {
	wb := testWorkbook(t)
	wb.Tabs[0].Config.Views = []model.View{{Name: "new", Filter: "status:new"}, {Name: "spam", Filter: "status:spam"}}
	return wb
}

// A tab's saved views: the bar under the tabs names them, the active one bracketed; ] and [
// switch between them (wrapping, "all" being the tab without a filter); a filter typed over a
// view leaves none bracketed.
func TestSavedViews(t *testing.T) {
	m := newLoaded(t, viewsWorkbook(t), 100, 30)
	bar := func() string { return strings.Split(plainScreen(m), "\n")[2] }
	if got := bar(); !strings.Contains(got, "views:[all] new  spam") || !strings.Contains(got, "[/] switch") {
		t.Fatalf("the view bar: %q", got)
	}
	keys(m, "]")
	if q := m.tabs.current().filter.query; q != "status:new" || !strings.Contains(bar(), "[new]") {
		t.Errorf("] went to %q, bar %q", q, bar())
	}
	for _, r := range m.tabs.current().visible {
		if st := m.tabs.current().data.table.Records[r].Status; st != "new" {
			t.Errorf("the view shows a %s row", st)
		}
	}
	keys(m, "]", "]")
	if q := m.tabs.current().filter.query; q != "" {
		t.Errorf("] past the last view wraps to all: %q", q)
	}
	keys(m, "[")
	if q := m.tabs.current().filter.query; q != "status:spam" {
		t.Errorf("[ from all goes to the last view: %q", q)
	}
	keys(m, "/")
	typeText(m, " hello")
	keys(m, "enter")
	if got := bar(); strings.Contains(got, "[spam]") || strings.Contains(got, "[all]") {
		t.Errorf("a filter that is no view leaves one bracketed: %q", got)
	}
	// A tab without views has no bar, and ] says how to make one.
	keys(m, "2")
	if got := bar(); strings.Contains(got, "views:") {
		t.Errorf("a tab without views shows a bar: %q", got)
	}
	keys(m, "]")
	if !strings.Contains(toastTexts(m), "[[tabs.deadletter.views]]") {
		t.Errorf("] on a tab without views: %q", toastTexts(m))
	}
}

// The command line (`:`): a tab by name, role or number, a view, a filter, help and quit;
// tab completes, cycling through the candidates; an unknown command says what there is.
func TestCommandLine(t *testing.T) {
	m := newLoaded(t, viewsWorkbook(t), 100, 30)
	run := func(text string) tea.Cmd {
		t.Helper()
		keys(m, ":")
		if !m.cmd.open {
			t.Fatal(": opened no command line")
		}
		typeText(m, text)
		return send(m, press("enter"))
	}
	if !strings.Contains(func() string { keys(m, ":"); s := plainScreen(m); keys(m, "esc"); return s }(), " : a tab (inbox, 2, …)") {
		t.Error("the command line shows no placeholder")
	}
	run("failed_calls")
	if m.tabs.current().cfg.Role != model.RoleDeadLetter {
		t.Errorf(":failed_calls is on %s", m.tabs.activeName())
	}
	run("queue")
	if m.tabs.current().cfg.Role != model.RoleQueue {
		t.Errorf(":queue is on %s", m.tabs.activeName())
	}
	run("1")
	if m.tabs.current().cfg.Role != model.RoleInbox {
		t.Errorf(":1 is on %s", m.tabs.activeName())
	}
	run("view spam")
	if q := m.tabs.current().filter.query; q != "status:spam" {
		t.Errorf(":view spam: %q", q)
	}
	run("v all")
	if q := m.tabs.current().filter.query; q != "" {
		t.Errorf(":v all: %q", q)
	}
	run("filter status:new")
	if q := m.tabs.current().filter.query; q != "status:new" {
		t.Errorf(":filter: %q", q)
	}
	run("nonsense")
	if !strings.Contains(toastTexts(m), `unknown command "nonsense"`) {
		t.Errorf("unknown command: %q", toastTexts(m))
	}
	run("view nope")
	if !strings.Contains(toastTexts(m), `no view "nope"`) {
		t.Errorf(":view nope: %q", toastTexts(m))
	}
	// tab completes, and cycles: "v" then tab tab.
	keys(m, ":")
	typeText(m, "view s")
	keys(m, "tab")
	if got := m.cmd.input.Value(); got != "view spam" {
		t.Errorf("tab completed %q", got)
	}
	keys(m, "esc")
	keys(m, ":")
	typeText(m, "f")
	keys(m, "tab")
	first := m.cmd.input.Value()
	keys(m, "tab")
	if second := m.cmd.input.Value(); first == second || !strings.HasPrefix(strings.ToLower(first), "f") || !strings.HasPrefix(strings.ToLower(second), "f") {
		t.Errorf("tab tab cycles the candidates starting with f: %q then %q", first, second)
	}
	keys(m, "esc")
	if m.cmd.open {
		t.Error("esc left the command line open")
	}
	run("help")
	if !m.help.open {
		t.Error(":help opened no help")
	}
	keys(m, "esc")
	cmd := run("q")
	quits := false
	for _, msg := range cmdMsgs(t, cmd) {
		if _, ok := msg.(tea.QuitMsg); ok {
			quits = true
		}
	}
	if !quits {
		t.Error(":q doesn't quit")
	}
}
