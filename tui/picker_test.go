package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

// TestPickerScrollsWhenShort: a status list longer than the body scrolls with the cursor.
func TestPickerScrollsWhenShort(t *testing.T) {
	wb := testWorkbook(t)
	cfg := model.DefaultTabConfig(model.RoleInbox)
	cfg.Statuses = []string{"new", "read", "replied", "waiting", "escalated", "billing", "sales", "support", "done", "spam", "archived", "duplicate"}
	tab, err := model.Decode(cfg, inboxRows(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	wb.Tabs[0] = tab
	m := newLoaded(t, wb, 60, 15, func(o *Options) { o.NoColor = true })
	withHalt(m)
	keys(m, "s")
	out := plainScreen(m)
	checkFrame(t, out, 60, 15)
	box, ok := boxRows(out)
	if !ok || !strings.Contains(strings.Join(box, "\n"), "Set status of") || !strings.Contains(strings.Join(box, "\n"), "esc cancel") {
		t.Fatalf("the picker keeps its title and keys:\n%s", out)
	}
	keys(m, "G")
	out = plainScreen(m)
	if !strings.Contains(out, "> c duplicate") {
		t.Errorf("the cursor's option is always shown:\n%s", out)
	}
	keys(m, "enter")
	if m.changes.pending.tab != "" || !m.writes.writing || m.writes.inflight.status != "duplicate" {
		t.Errorf("enter picks the option under the cursor: %+v", m.writes.inflight)
	}
}

// TestPickerTitleNamesTheRow: one row's picker is titled by what a person recognises, never
// by an opaque key.
func TestPickerTitleNamesTheRow(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rowsOf(
		[]string{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
		[]string{"2025-06-01T11:00:00Z", "Ada Lovelace", "ada@example.com", "hi", "", "249a4584-5dbe-4b6e-9d5b-0d4c7c0b1a2f"},
		[]string{"2025-06-01T10:00:00Z", "", "grace@example.com", "hi", "", "5c1e0a7e-8f3b-4c3e-a1d2-3b4c5d6e7f80"},
		[]string{"2025-06-01T09:00:00Z", " ", "", "hi", "", "0e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b"},
	))
	m := newLoaded(t, wb, 100, 30)
	title := func() string {
		t.Helper()
		p, ok := m.dialog.(picker)
		if !ok {
			t.Fatalf("no picker: %T", m.dialog)
		}
		keys(m, "esc")
		return p.title
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"1", "s"}, "Set status of Ada Lovelace"},
		{[]string{"j", "s"}, "Set status of grace@example.com"},
		{[]string{"j", "s"}, "Set status of row 4"},
		{[]string{"2", "s"}, "Set status of crm, row 3"},
		{[]string{"3", "s"}, "Set status of job-1"},
	} {
		keys(m, c.keys...)
		if got := title(); got != c.want {
			t.Errorf("after %v: title %q, want %q", c.keys, got, c.want)
		}
	}
	keys(m, "1", "s")
	if out := plainScreen(m); strings.Contains(out, "249a4584") {
		t.Errorf("the ID is not the title:\n%s", out)
	}
}

func TestPickerCurrentStatusIsANoop(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "j", "s", "enter") // msg-001 is "new"; enter picks "new"
	if m.writes.writing {
		t.Errorf("setting a row to the status it has writes nothing")
	}
	if !strings.Contains(plainScreen(m), "already new") {
		t.Errorf("says why nothing happened:\n%s", plainScreen(m))
	}
}

// TestPickerLabelsFollowTheKeyMap: the rows' quick-choice keys are the digits and letters no
// binding of the picker uses. With the defaults that leaves out g, j, k and q; a key rebound
// to move in the picker is no longer a label, so it moves instead of choosing, and the row it
// labelled gets the next free key.
func TestPickerLabelsFollowTheKeyMap(t *testing.T) {
	km := DefaultKeyMap()
	if got := km.pickerLabels(); got != "123456789abcdefhilmnoprstuvwxyz" {
		t.Errorf("default labels %q", got)
	}
	if err := km.Rebind("down", []string{"down", "a"}); err != nil {
		t.Fatal(err)
	}
	labels := km.pickerLabels()
	if strings.Contains(labels, "a") || !strings.HasPrefix(labels, "123456789bcdef") {
		t.Fatalf("labels with down on a: %q", labels)
	}
	options := make([]string, 12)
	for i := range options {
		options[i] = fmt.Sprintf("opt%d", i)
	}
	c := newLoaded(t, testWorkbook(t), 80, 24).c
	c.keys = &km
	p := newPicker(c, "Pick", options, "")
	d, a := p.Update(press("a"))
	if a != nil || d.(picker).cursor != 1 {
		t.Errorf("a moves down when down is bound to it: action %#v cursor %d", a, d.(picker).cursor)
	}
	if _, a := p.Update(press("b")); a != (pickStatusAction{status: "opt9"}) {
		t.Errorf("b chooses the tenth row (a is taken): %#v", a)
	}
	if v := ansiStripLine(p.View()); !strings.Contains(v, "b opt9") || strings.Contains(v, "a opt") {
		t.Errorf("the rows are drawn with the labels that choose them:\n%s", v)
	}
}
