package tui

import (
	"errors"
	"strings"
	"testing"
)

func TestToastsExpire(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, press("y"))
	if !strings.Contains(plainScreen(m), "copied ID") {
		t.Fatal("toast missing")
	}
	id := m.toasts.items[len(m.toasts.items)-1].id
	before := m.tableH
	send(m, toastExpiredMsg{id: id})
	if strings.Contains(plainScreen(m), "copied ID") {
		t.Error("an expired toast is gone")
	}
	if m.tableH != before+1 {
		t.Errorf("the table gets its row back: %d → %d", before, m.tableH)
	}
	// Errors are dismissed with esc.
	send(m, appliedMsg{op: writeOp{kind: writeSetStatus, tab: "Inbox"}, err: errors.New("boom")})
	if !strings.Contains(plainScreen(m), "write failed: boom") {
		t.Fatal("error toast missing")
	}
	keys(m, "esc")
	if strings.Contains(plainScreen(m), "write failed") {
		t.Error("esc dismisses error toasts")
	}
}
