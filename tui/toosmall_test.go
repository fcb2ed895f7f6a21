package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A terminal shrunk below the minimum hides what is open; keys then act only on what the
// too-small screen shows: it names the open dialog, esc closes it, and no key reaches the
// dialog while it can't be seen, so a key typed after enlarging means what the table says.
func TestTooSmallScreenNeverFeedsAHiddenDialog(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "s")
	if m.dialog == nil {
		t.Fatal("s opened no status picker")
	}
	send(m, tea.WindowSizeMsg{Width: 50, Height: 12})
	if out := plainScreen(m); !strings.Contains(out, "a dialog is open") || !strings.Contains(out, "esc closes it") {
		t.Errorf("the too-small screen doesn't say a dialog is open:\n%s", out)
	}
	// A digit while hidden is dropped: the picker doesn't take it.
	keys(m, "2")
	if m.dialog == nil || m.writes.writing {
		t.Fatal("a key typed on the too-small screen reached the hidden picker")
	}
	keys(m, "esc")
	if m.dialog != nil {
		t.Fatal("esc on the too-small screen left the picker open")
	}
	if out := plainScreen(m); strings.Contains(out, "is open") {
		t.Errorf("the screen still says something is open:\n%s", out)
	}
	send(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	before := m.tabs.active
	keys(m, "2")
	if m.dialog != nil || m.writes.writing {
		t.Fatal("2 after enlarging went to a picker, not to the tab bar")
	}
	if m.tabs.active == before {
		t.Errorf("2 didn't switch to the second tab (active %d)", m.tabs.active)
	}
	// The help and the filter prompt close the same way.
	keys(m, "?")
	send(m, tea.WindowSizeMsg{Width: 50, Height: 12})
	if out := plainScreen(m); !strings.Contains(out, "the help is open") {
		t.Errorf("the too-small screen doesn't say the help is open:\n%s", out)
	}
	keys(m, "esc")
	if m.help.open {
		t.Error("esc on the too-small screen left the help open")
	}
}
