package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestQuit(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "s")
	if cmd := send(m, press("q")); m.dialog != nil || isQuit(t, cmd) {
		t.Errorf("q closes the picker first")
	}
	if cmd := send(m, press("q")); !isQuit(t, cmd) {
		t.Errorf("q quits from the table")
	}
	m = newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "s")
	if cmd := send(m, press("ctrl+c")); !isQuit(t, cmd) {
		t.Errorf("ctrl+c quits from anywhere")
	}
}

func TestTooSmall(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 59, 20)
	if got := plainScreen(m); !strings.Contains(got, "need 60x15, have 59x20") {
		t.Errorf("too-small view:\n%s", got)
	}
	send(m, tea.WindowSizeMsg{Width: 60, Height: 15})
	checkFrame(t, screen(m), 60, 15)
}
