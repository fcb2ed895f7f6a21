package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestNavigation(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	if got := cursorID(m); got != "msg-000" {
		t.Fatalf("first row = %q, want the newest message msg-000", got)
	}
	keys(m, "j", "j", "down")
	if got := cursorID(m); got != "msg-003" {
		t.Errorf("after 3 down: %q, want msg-003", got)
	}
	keys(m, "k", "up")
	if got := cursorID(m); got != "msg-001" {
		t.Errorf("after 2 up: %q, want msg-001", got)
	}
	keys(m, "G")
	if got := cursorID(m); got != "msg-029" {
		t.Errorf("G: %q, want the oldest msg-029", got)
	}
	if !strings.Contains(plainScreen(m), "Message 29 from") {
		t.Errorf("G must scroll the last row into view:\n%s", plainScreen(m))
	}
	keys(m, "g")
	if got := cursorID(m); got != "msg-000" {
		t.Errorf("g: %q, want msg-000", got)
	}
	keys(m, "ctrl+d")
	half := m.geo.tableH / 2
	if ts := m.tabs.current(); ts.cursor != half {
		t.Errorf("ctrl+d moved to %d, want %d (half of %d rows)", ts.cursor, half, m.geo.tableH)
	}
	keys(m, "ctrl+u", "pgdown")
	if ts := m.tabs.current(); ts.cursor != m.geo.tableH {
		t.Errorf("pgdn moved to %d, want %d", ts.cursor, m.geo.tableH)
	}
	keys(m, "pgup", "k")
	if ts := m.tabs.current(); ts.cursor != 0 {
		t.Errorf("pgup then k at the top: cursor %d, want 0", ts.cursor)
	}
}

func TestTabsKeepTheirOwnState(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "j", "space")
	if m.tabs.current().nMarked != 1 {
		t.Fatal("mark didn't register")
	}
	keys(m, "2")
	if m.tabs.current().name() != "failed_calls" {
		t.Fatalf("2 selects %q, want failed_calls", m.tabs.current().name())
	}
	keys(m, "j")
	keys(m, "/")
	typeText(m, "crm")
	keys(m, "enter")
	keys(m, "tab")
	if m.tabs.current().name() != "Jobs" {
		t.Fatalf("tab from failed_calls went to %q", m.tabs.current().name())
	}
	keys(m, "tab") // wraps to Inbox
	in := m.tabs.current()
	if in.name() != "Inbox" || in.cursor != 2 || in.nMarked != 1 || in.filter.query != "" {
		t.Errorf("Inbox state after a round trip: cursor %d marks %d filter %q", in.cursor, in.nMarked, in.filter.query)
	}
	keys(m, "shift+tab", "shift+tab")
	dl := m.tabs.current()
	if dl.name() != "failed_calls" || dl.filter.query != "crm" || len(dl.visible) != 2 {
		t.Errorf("failed_calls kept filter %q (%d rows), want crm (2 rows)", dl.filter.query, len(dl.visible))
	}
}

func TestMarks(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	ts := m.tabs.current()
	keys(m, "space", "space")
	if ts.nMarked != 2 || ts.cursor != 2 {
		t.Errorf("space marks and moves down: %d marked, cursor %d", ts.nMarked, ts.cursor)
	}
	if !strings.Contains(plainScreen(m), "2 marked") {
		t.Errorf("footer should count marks:\n%s", plainScreen(m))
	}
	keys(m, "k", "space")
	if ts.nMarked != 1 {
		t.Errorf("space on a marked row unmarks it: %d marked", ts.nMarked)
	}
	keys(m, "/")
	typeText(m, "status:spam")
	keys(m, "enter", "*")
	if ts.nMarked != 6 {
		t.Errorf("* marks the 5 visible spam rows on top of 1: %d marked", ts.nMarked)
	}
	recs, hidden := ts.targets()
	if len(recs) != 5 || hidden != 1 {
		t.Errorf("targets respect the filter: %d targets, %d hidden", len(recs), hidden)
	}
	if !strings.Contains(plainScreen(m), "6 marked (1 hidden by filter)") {
		t.Errorf("footer should say marks are hidden by the filter:\n%s", plainScreen(m))
	}
	keys(m, "V")
	if ts.nMarked != 0 {
		t.Errorf("V unmarks all: %d marked", ts.nMarked)
	}
}

func TestMouseWheel(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.tabs.current().cursor != 3 {
		t.Errorf("wheel down moves 3 rows: cursor %d", m.tabs.current().cursor)
	}
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.tabs.current().cursor != 0 {
		t.Errorf("wheel up moves back: cursor %d", m.tabs.current().cursor)
	}
}

// ctrl+z suspends (bubbletea puts the program in the background; fg resumes).
func TestCtrlZSuspends(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	found := false
	for _, msg := range cmdMsgs(t, send(m, press("ctrl+z"))) {
		if _, ok := msg.(tea.SuspendMsg); ok {
			found = true
		}
	}
	if !found {
		t.Error("ctrl+z doesn't suspend")
	}
}

// Over triage serve (Options.Remote) the program runs on the shared host: ctrl+z would stop
// the server's process group and E would run an editor (a shell) there. Neither happens;
// both say why.
func TestRemoteSessionNeitherSuspendsNorEdits(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Remote = true })
	for _, msg := range cmdMsgs(t, send(m, press("ctrl+z"))) {
		if _, ok := msg.(tea.SuspendMsg); ok {
			t.Error("ctrl+z suspends a remote session")
		}
	}
	if !strings.Contains(toastTexts(m), "suspend is not available over triage serve") {
		t.Errorf("toasts %q", toastTexts(m))
	}
	send(m, tea.EnvMsg{"EDITOR=/bin/sh", "TERM=xterm"})
	cmd := send(m, press("2"))
	_ = cmd
	cmd = send(m, press("E"))
	if m.edit.e != nil {
		t.Error("E opened an edit in a remote session")
	}
	for _, msg := range cmdMsgs(t, cmd) {
		if name := typeName(msg); name != "tui.toastExpiredMsg" {
			t.Errorf("E in a remote session ran %s", name)
		}
	}
	if !strings.Contains(toastTexts(m), "editing a payload is not available over triage serve") {
		t.Errorf("toasts %q", toastTexts(m))
	}
}
