package tui

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// cursorID is the ID of the record under the cursor of the active tab.
func cursorID(m *Model) string {
	r, _ := m.activeTab().current()
	if r == nil {
		return ""
	}
	return r.ID
}

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
	half := m.tableH / 2
	if ts := m.activeTab(); ts.cursor != half {
		t.Errorf("ctrl+d moved to %d, want %d (half of %d rows)", ts.cursor, half, m.tableH)
	}
	keys(m, "ctrl+u", "pgdown")
	if ts := m.activeTab(); ts.cursor != m.tableH {
		t.Errorf("pgdn moved to %d, want %d", ts.cursor, m.tableH)
	}
	keys(m, "pgup", "k")
	if ts := m.activeTab(); ts.cursor != 0 {
		t.Errorf("pgup then k at the top: cursor %d, want 0", ts.cursor)
	}
}

func TestTabsKeepTheirOwnState(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "j", "space")
	if m.activeTab().nMarked != 1 {
		t.Fatal("mark didn't register")
	}
	keys(m, "2")
	if m.activeTab().name() != "failed_calls" {
		t.Fatalf("2 selects %q, want failed_calls", m.activeTab().name())
	}
	keys(m, "j")
	keys(m, "/")
	typeText(m, "crm")
	keys(m, "enter")
	keys(m, "tab")
	if m.activeTab().name() != "Jobs" {
		t.Fatalf("tab from failed_calls went to %q", m.activeTab().name())
	}
	keys(m, "tab") // wraps to Inbox
	in := m.activeTab()
	if in.name() != "Inbox" || in.cursor != 2 || in.nMarked != 1 || in.filter.query != "" {
		t.Errorf("Inbox state after a round trip: cursor %d marks %d filter %q", in.cursor, in.nMarked, in.filter.query)
	}
	keys(m, "shift+tab", "shift+tab")
	dl := m.activeTab()
	if dl.name() != "failed_calls" || dl.filter.query != "crm" || len(dl.visible) != 2 {
		t.Errorf("failed_calls kept filter %q (%d rows), want crm (2 rows)", dl.filter.query, len(dl.visible))
	}
}

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

func TestMarks(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	ts := m.activeTab()
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

func TestSetStatusBuildsEdits(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	// Three marked rows (msg-000 blank status, msg-001 new, msg-002 read) → done.
	keys(m, "space", "space", "space", "s")
	p, ok := m.dialog.(picker)
	if !ok {
		t.Fatalf("s opens the status picker, got %T", m.dialog)
	}
	if strings.Join(p.options, ",") != "new,read,replied,done,spam" {
		t.Errorf("picker lists the table's statuses: %v", p.options)
	}
	if !strings.Contains(plainScreen(m), "Set status of 3 rows") {
		t.Errorf("picker is on screen:\n%s", plainScreen(m))
	}
	keys(m, "4") // done
	c, ok := m.dialog.(confirm)
	if !ok {
		t.Fatalf("more than one row asks to confirm, got %T", m.dialog)
	}
	screenText := plainScreen(m)
	if !strings.Contains(screenText, "Set status of 3 rows to done? [y/N]") || strings.Contains(screenText, "current filter") {
		t.Errorf("confirm states the count, and nothing about a filter when there is none:\n%s", screenText)
	}
	want := map[string]string{"msg-000": "", "msg-001": "new", "msg-002": "read"}
	if len(c.writeOp().edits) != 3 {
		t.Fatalf("%d edits, want 3", len(c.writeOp().edits))
	}
	for _, e := range c.writeOp().edits {
		saw, ok := want[e.ID]
		if !ok || e.Tab != "Inbox" || e.Expect[model.FStatus] != saw || e.Set[model.FStatus] != "done" || len(e.Set) != 1 {
			t.Errorf("edit %v: want Inbox/%s expecting status %q, setting done", e, e.ID, saw)
		}
	}
	keys(m, "enter") // the default is No
	if m.dialog != nil || m.writing {
		t.Fatalf("enter must cancel (default No): dialog %T writing %v", m.dialog, m.writing)
	}
	keys(m, "s", "4", "y")
	if !m.writing || m.inflight == nil || len(m.inflight.edits) != 3 {
		t.Fatalf("y sends the write: writing=%v inflight=%v", m.writing, m.inflight)
	}
	if !strings.Contains(plainScreen(m), "saving 3 rows") {
		t.Errorf("header shows the write in flight:\n%s", plainScreen(m))
	}
	// A second write while one is in flight is refused (one Apply at a time).
	keys(m, "s")
	if m.dialog != nil {
		t.Error("no picker while a write is in flight")
	}

	// The store answers: two written, one conflict.
	op := *m.inflight
	conflict := model.Conflict{Edit: op.edits[2], Row: 4, Field: model.FStatus, Saw: "read", Now: "spam"}
	send(m, appliedMsg{op: op, res: model.ApplyResult{
		Applied:   []model.Applied{{Edit: op.edits[0], Row: 2}, {Edit: op.edits[1], Row: 3}},
		Conflicts: []model.Conflict{conflict},
	}})
	ts := m.activeTab()
	t0 := ts.data.table
	for id, wantStatus := range map[string]string{"msg-000": "done", "msg-001": "done", "msg-002": "spam"} {
		r := &t0.Records[ts.data.byID[id]]
		if r.Status != wantStatus || t0.Get(r, model.FStatus) != wantStatus {
			t.Errorf("%s after the write: status %q cell %q, want %q", id, r.Status, t0.Get(r, model.FStatus), wantStatus)
		}
	}
	if ts.nMarked != 1 {
		t.Errorf("written rows are unmarked, the conflicting one stays marked: %d marked", ts.nMarked)
	}
	out := plainScreen(m)
	if !strings.Contains(out, "2 set to done") {
		t.Errorf("toast reports the count:\n%s", out)
	}
	if !strings.Contains(out, `✗ 2 set to done; 1 conflict: Inbox row 4 (msg-002): status was "read"`) || !strings.Contains(out, `is "spam" now; not overwritten`) {
		t.Errorf("conflict is reported loudly with what happened:\n%s", out)
	}
	if len(m.undo) != 1 || len(m.undo[0].edits) != 2 {
		t.Fatalf("undo stack holds the 2 applied edits: %+v", m.undo)
	}

	// Undo: the inverse of what was applied, confirmed (2 rows).
	keys(m, "u")
	c, ok = m.dialog.(confirm)
	if !ok {
		t.Fatalf("undo of 2 rows asks to confirm, got %T", m.dialog)
	}
	for _, e := range c.writeOp().edits {
		if e.Expect[model.FStatus] != "done" || (e.ID == "msg-001" && e.Set[model.FStatus] != "new") || (e.ID == "msg-000" && e.Set[model.FStatus] != "") {
			t.Errorf("undo edit %v should expect done and restore the old value", e)
		}
	}
	keys(m, "y")
	if !m.writing || m.inflight.kind != writeUndo || len(m.undo) != 0 {
		t.Fatalf("undo sent: writing=%v undo stack %d", m.writing, len(m.undo))
	}
	send(m, appliedMsg{op: *m.inflight, err: errors.New("HTTP 503")})
	if len(m.undo) != 1 {
		t.Errorf("a failed undo stays undoable: %d entries", len(m.undo))
	}
	if !strings.Contains(plainScreen(m), "write failed: HTTP 503") {
		t.Errorf("a failed write is reported:\n%s", plainScreen(m))
	}
}

// TestConflictWithReasonLeavesTheRowAlone: a conflict that is not a changed cell (a
// duplicated ID, a column gone from the tab) carries a Reason, no Now, and a Field that may be
// the ID column itself. Nothing of it is written into the local row (the ID used to go
// blank); the toast names the reason, even when a plain conflict comes first.
func TestConflictWithReasonLeavesTheRowAlone(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 250, 30)
	keys(m, "space", "space", "space", "space", "s", "4", "y") // msg-000..003 → done
	if !m.writing || m.inflight == nil || len(m.inflight.edits) != 4 {
		t.Fatalf("the write of 4 rows is in flight: writing=%v inflight=%v", m.writing, m.inflight)
	}
	op := *m.inflight
	edit := map[string]model.Edit{}
	for _, e := range op.edits {
		edit[e.ID] = e
	}
	dup := "the same ID is on rows 3, 9 (make it unique, then retry)"
	send(m, appliedMsg{op: op, res: model.ApplyResult{
		Applied: []model.Applied{{Edit: edit["msg-000"], Row: 2}},
		Conflicts: []model.Conflict{
			{Edit: edit["msg-001"], Row: 3, Field: model.FStatus, Saw: "new", Now: "spam"},
			{Edit: edit["msg-002"], Row: 4, Field: model.FID, Saw: "msg-002", Reason: dup},
			{Edit: edit["msg-003"], Row: 5, Field: model.FStatus, Saw: "replied", Reason: "column status is no longer in the tab"},
		},
	}})
	ts := m.activeTab()
	tab := ts.data.table
	for id, want := range map[string]string{"msg-000": "done", "msg-001": "spam", "msg-002": "read", "msg-003": "replied"} {
		ri, ok := ts.data.byID[id]
		if !ok {
			t.Errorf("%s is no longer indexed by its ID", id)
			continue
		}
		r := &tab.Records[ri]
		if got := tab.Get(r, model.FID); got != id {
			t.Errorf("%s: its ID cell reads %q after the write", id, got)
		}
		if r.Status != want || tab.Get(r, model.FStatus) != want {
			t.Errorf("%s: status %q (cell %q), want %q", id, r.Status, tab.Get(r, model.FStatus), want)
		}
	}
	if ts.nMarked != 3 {
		t.Errorf("the three conflicting rows stay marked: %d marked", ts.nMarked)
	}
	out := plainScreen(m)
	if !strings.Contains(out, "3 conflicts: Inbox row 4 (msg-002): "+dup+"; not written") {
		t.Errorf("the toast names the reason first:\n%s", out)
	}
}

func TestSetStatusSingleRowAndNoID(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "j", "s", "j", "enter") // msg-001 is new; the picker starts there; j → read
	if !m.writing || len(m.inflight.edits) != 1 || m.dialog != nil {
		t.Fatalf("one row writes without a confirm: writing=%v dialog=%T", m.writing, m.dialog)
	}
	if e := m.inflight.edits[0]; e.ID != "msg-001" || e.Set[model.FStatus] != "read" || e.Expect[model.FStatus] != "new" {
		t.Errorf("edit %v", e)
	}
	m = newLoaded(t, testWorkbook(t), 80, 24)
	// msg-005 has no ID; mark it and msg-004 (the rows at positions 5 and 4).
	keys(m, "j", "j", "j", "j", "space", "space", "s", "2")
	if m.writing != true || len(m.inflight.edits) != 1 || m.inflight.edits[0].ID != "msg-004" {
		t.Fatalf("only the row with an ID is written: %+v", m.inflight)
	}
	if !strings.Contains(plainScreen(m), "1 row skipped (row 7): no ID") {
		t.Errorf("skipped rows are reported with the reason:\n%s", plainScreen(m))
	}
}

func TestPickerCurrentStatusIsANoop(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "j", "s", "enter") // msg-001 is "new"; enter picks "new"
	if m.writing {
		t.Errorf("setting a row to the status it has writes nothing")
	}
	if !strings.Contains(plainScreen(m), "already new") {
		t.Errorf("says why nothing happened:\n%s", plainScreen(m))
	}
}

func TestClearError(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "e")
	if !strings.Contains(plainScreen(m), "the inbox has no sticky errors") {
		t.Errorf("e on the inbox explains:\n%s", plainScreen(m))
	}
	keys(m, "3", "*", "e") // Jobs: only job-3 is an error
	if !m.writing || len(m.inflight.edits) != 1 {
		t.Fatalf("one sticky row: written without confirm, got writing=%v dialog %T", m.writing, m.dialog)
	}
	e := m.inflight.edits[0]
	if e.ID != "job-3" || e.Set[model.FStatus] != "pending" || e.Set[model.FLastError] != "" || e.Expect[model.FLastError] != "quota exceeded" {
		t.Errorf("clear-error edit: %v", e)
	}
	if e.Set[model.FUpdatedAt] != model.FormatTime(testNow) {
		t.Errorf("updatedAt is set from Options.Now: %q", e.Set[model.FUpdatedAt])
	}
	if !strings.Contains(plainScreen(m), "3 rows skipped: not a sticky error") {
		t.Errorf("non-sticky marked rows are skipped with a reason:\n%s", plainScreen(m))
	}
}

func TestReadOnly(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Store = nopStore{t: t, readOnly: true} })
	if !strings.Contains(plainScreen(m), "RO ·") {
		t.Errorf("header shows RO:\n%s", plainScreen(m))
	}
	for _, k := range []string{"s", "e", "u"} {
		keys(m, k)
		if m.dialog != nil || m.writing {
			t.Errorf("%s must not start a write in read-only mode", k)
		}
		if !strings.Contains(plainScreen(m), "read-only: opened with --readonly") {
			t.Errorf("%s explains read-only:\n%s", k, plainScreen(m))
		}
	}
}

func TestCopy(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	cmd := send(m, press("y"))
	if cmd == nil || !strings.Contains(plainScreen(m), "copied ID msg-000") {
		t.Errorf("y copies the ID and says so:\n%s", plainScreen(m))
	}
	if !containsMsg(t, cmd, func(msg tea.Msg) bool { return strings.Contains(strings.ToLower(typeName(msg)), "clipboard") }) {
		t.Errorf("y should return tea.SetClipboard's message")
	}
	keys(m, "enter", "j", "j")
	f, _ := m.detail.focused()
	cmd = send(m, press("y"))
	if cmd == nil || !strings.Contains(plainScreen(m), "copied "+f.label) {
		t.Errorf("y in the detail view copies the focused field %q:\n%s", f.label, plainScreen(m))
	}
}

func TestDetail(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[0].Hidden = []bool{false, false, false, false, false, true, false}
	m := newLoaded(t, wb, 80, 24)
	keys(m, "j", "j", "j", "j", "j", "enter") // msg-005: no ID, a problem
	out := plainScreen(m)
	for _, want := range []string{"Inbox · row 7", "! no ID", "ID (hidden)", "Notes (extra)", "Message", "Second line of 5."} {
		if !strings.Contains(out, want) {
			t.Errorf("detail should show %q:\n%s", want, out)
		}
	}
	keys(m, "q")
	if m.detail != nil {
		t.Error("q closes the detail view first, not the app")
	}
	keys(m, "2", "j", "enter")
	out = plainScreen(m)
	if !strings.Contains(out, `"id": "k-1"`) {
		t.Errorf("JSON payloads are pretty-printed:\n%s", out)
	}
	keys(m, "esc")
	if m.detail != nil {
		t.Error("esc closes the detail view")
	}
}

func TestHelpOverlayListsEveryBinding(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "?")
	out := plainScreen(m)
	for _, g := range m.c.keys.fullHelp() {
		if !strings.Contains(out, g.title) {
			t.Errorf("help lacks group %q", g.title)
		}
		for _, e := range g.entries {
			if !strings.Contains(out, e.desc) || !strings.Contains(out, e.key) {
				t.Errorf("help lacks %q (%s) at 80x24:\n%s", e.desc, e.key, out)
			}
		}
		for _, b := range g.bindings {
			if !strings.Contains(out, b.Help().Key) {
				t.Errorf("help lacks the keys %q of %q at 80x24", b.Help().Key, b.Help().Desc)
			}
		}
	}
	keys(m, "esc")
	if m.showHelp {
		t.Error("esc closes help")
	}
}

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

func isQuit(t *testing.T, cmd tea.Cmd) bool {
	t.Helper()
	return containsMsg(t, cmd, func(msg tea.Msg) bool { _, ok := msg.(tea.QuitMsg); return ok })
}

// containsMsg reports whether one of the messages of a Cmd tree passes f (see cmdMsgs).
func containsMsg(t *testing.T, cmd tea.Cmd, f func(tea.Msg) bool) bool {
	t.Helper()
	return slices.ContainsFunc(cmdMsgs(t, cmd), f)
}

// cmdMsgs runs a Cmd tree and returns the messages it produces, batches and sequences
// flattened. Tick Cmds (tea.Tick: toast expiry, the clock, auto refresh) are recognised by
// what they are, not by how long they take, and not run: they only sleep, then say so.
// Every other Cmd must return; one that doesn't within hangAfter (a store or replayer
// call, which tests don't hand to this) fails the test rather than being taken for a tick.
// So the answer never depends on how loaded the machine is.
func cmdMsgs(t *testing.T, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	var msgs []tea.Msg
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil || isTick(c) {
			return
		}
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		var msg tea.Msg
		select {
		case msg = <-done:
		case <-time.After(hangAfter):
			t.Fatalf("a Cmd (%s) has not returned after %v", cmdName(c), hangAfter)
		}
		if sub, ok := subCmds(msg); ok {
			for _, c := range sub {
				run(c)
			}
			return
		}
		msgs = append(msgs, msg)
	}
	run(cmd)
	return msgs
}

// tickFunc matches the function of the Cmd tea.Tick and tea.Every return (a closure of
// theirs, named after them even when inlined into a caller).
var tickFunc = regexp.MustCompile(`\.(Tick|Every)\.func\d+$`)

func isTick(c tea.Cmd) bool { return tickFunc.MatchString(cmdName(c)) }

func cmdName(c tea.Cmd) string {
	if f := runtime.FuncForPC(reflect.ValueOf(c).Pointer()); f != nil {
		return f.Name()
	}
	return "?"
}

// TestCmdMsgs: cmdMsgs tells ticks by what they are (if bubbletea or the compiler ever names
// them differently, this fails instead of the tests that rely on it turning slow), and runs
// everything else, however nested.
func TestCmdMsgs(t *testing.T) {
	var tt toasts
	for name, c := range map[string]tea.Cmd{
		"tea.Tick":  tea.Tick(time.Hour, func(time.Time) tea.Msg { return nil }),
		"tea.Every": tea.Every(time.Hour, func(time.Time) tea.Msg { return nil }),
		"toast":     tt.push(toastError, "x"),
		"clock":     clockTick(),
		"refresh":   refreshTick(time.Hour),
	} {
		if !isTick(c) {
			t.Errorf("%s is not recognised as a tick: its function is %s", name, cmdName(c))
		}
	}
	if isTick(tea.Quit) || isTick(tea.SetClipboard("x")) {
		t.Error("tea.Quit and tea.SetClipboard are not ticks")
	}
	cmd := tea.Batch(tea.Tick(time.Hour, nil), tea.Sequence(tea.SetClipboard("x"), tea.Batch(tea.Quit)))
	msgs := cmdMsgs(t, cmd)
	if len(msgs) != 2 || !isQuit(t, cmd) || typeName(msgs[0]) == typeName(msgs[1]) {
		t.Errorf("cmdMsgs = %#v, want the clipboard and the quit messages", msgs)
	}
}

// subCmds returns the Cmds of a tea.BatchMsg or of a sequence (bubbletea's sequenceMsg is
// unexported, hence the reflection: any slice of Cmds).
func subCmds(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if !v.IsValid() || v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeFor[tea.Cmd]() {
		return nil, false
	}
	out := make([]tea.Cmd, v.Len())
	for i := range out {
		out[i], _ = v.Index(i).Interface().(tea.Cmd)
	}
	return out, true
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestTooSmall(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 59, 20)
	if got := plainScreen(m); !strings.Contains(got, "need 60x15, have 59x20") {
		t.Errorf("too-small view:\n%s", got)
	}
	send(m, tea.WindowSizeMsg{Width: 60, Height: 15})
	checkFrame(t, screen(m), 60, 15)
}

func TestLoadingAndLoadError(t *testing.T) {
	m := New(Options{Store: nopStore{t: t}, SpreadsheetID: "sheet-1", Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	if got := plainScreen(m); !strings.Contains(got, "loading sheet-1") {
		t.Errorf("loading view:\n%s", got)
	}
	send(m, loadedMsg{seq: m.loadSeq, err: errors.New("googleapi: Error 403: The caller does not have permission\x1b]0;x\x07")})
	got := plainScreen(m)
	if !strings.Contains(got, "Couldn't load the spreadsheet") || !strings.Contains(got, "403: The caller does not have permission␛]0;x␇") || !strings.Contains(got, "r retry") {
		t.Errorf("load error view shows the sanitised error and what to do:\n%s", got)
	}
	cmd := send(m, press("r"))
	if cmd == nil || !m.loading {
		t.Errorf("r retries the load")
	}
	send(m, loaded(m, testWorkbook(t)))
	if !m.hasData || !strings.Contains(plainScreen(m), "Acme contact form") {
		t.Errorf("after a good load the table shows")
	}
}

func TestRefreshKeepsCursorMarksAndFilter(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "/")
	typeText(m, "status:new")
	keys(m, "enter", "j", "j", "space", "k") // mark the third new row; cursor on the second
	ts := m.activeTab()
	before := cursorID(m)
	markedID := ts.data.table.Records[ts.visible[2]].ID
	cmd := send(m, press("r"))
	if cmd == nil || !m.loading {
		t.Fatal("r starts a load")
	}
	// The reloaded sheet has two new messages on top, and lost one of the marked rows.
	wb := testWorkbook(t)
	rows := inboxRows()
	extra := rowsOf(
		[]string{testNow.Format(time.RFC3339), "New Person", "np@example.com", "fresh", "", "msg-100", ""},
		[]string{testNow.Format(time.RFC3339), "Other Person", "op@example.com", "fresh too", "new", "msg-101", ""},
	)
	rows = append(rows, extra...)
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rows)
	send(m, loaded(m, wb))
	ts = m.activeTab()
	if got := cursorID(m); got != before {
		t.Errorf("cursor moved from %s to %s across a refresh", before, got)
	}
	if ts.filter.query != "status:new" {
		t.Errorf("filter lost: %q", ts.filter.query)
	}
	if ts.nMarked != 1 || !ts.marked[ts.data.byID[markedID]] {
		t.Errorf("mark on %s lost across a refresh", markedID)
	}
	if !strings.Contains(plainScreen(m), "2 new messages") {
		t.Errorf("new inbox IDs are announced:\n%s", plainScreen(m))
	}

	// A failing refresh keeps the data and says so.
	send(m, press("r"))
	send(m, loadedMsg{seq: m.loadSeq, err: errors.New("Get \"https://sheets.googleapis.com\": dial tcp: i/o timeout")})
	out := plainScreen(m)
	if !strings.Contains(out, "refresh failed") || !strings.Contains(out, "✗ error") || len(m.activeTab().visible) == 0 {
		t.Errorf("refresh error: toast + header state, old data kept:\n%s", out)
	}
}

func TestRefreshDuringWriteWaits(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "s", "4") // one row → write starts
	if !m.writing {
		t.Fatal("write should be in flight")
	}
	if cmd := send(m, refreshTickMsg{}); m.loading {
		t.Errorf("auto-refresh must not start while a write is in flight (cmd %v)", cmd != nil)
	}
	send(m, press("r"))
	if m.loading || !m.refreshQueued {
		t.Errorf("manual refresh waits for the write")
	}
	op := *m.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 2}}}})
	if !m.loading {
		t.Errorf("the queued refresh starts when the write finishes")
	}
}

func TestStaleLoadAfterWriteIsDropped(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, press("r")) // a read is in flight…
	seq := m.loadSeq
	m.loading = false // …and (in this test) a write lands before it returns
	keys(m, "s", "4")
	op := *m.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 2}}}})
	m.loadSeq = seq
	cmd := send(m, loaded(m, testWorkbook(t))) // data read before the write
	if r, _ := m.activeTab().current(); r.Status != "done" {
		t.Errorf("a read that started before the write must not undo it on screen: status %q", r.Status)
	}
	if cmd == nil || !m.loading {
		t.Errorf("the stale read is replaced by a fresh one")
	}
}

func TestMissingAndBrokenTabs(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs = wb.Tabs[:1] // only an Inbox
	wb.Missing = []model.TabConfig{model.DefaultTabConfig(model.RoleDeadLetter)}
	_, err := model.Decode(model.DefaultTabConfig(model.RoleQueue), rowsOf([]string{"id", "kind"}), time.UTC)
	wb.Broken = []model.TabError{{Config: model.DefaultTabConfig(model.RoleQueue), Err: err}}
	m := newLoaded(t, wb, 80, 24)
	out := plainScreen(m)
	if strings.Contains(out, "failed_calls 0") || strings.Contains(out, "2 failed_calls") {
		t.Errorf("a missing tab is not in the tab bar:\n%s", out)
	}
	if !strings.Contains(out, "`failed_calls` tab not found: run `triage init` to create it") {
		t.Errorf("footer hints at triage init:\n%s", out)
	}
	if !strings.Contains(out, "2 Jobs !") || !strings.Contains(out, `tab "Jobs" (queue) is missing`) {
		t.Errorf("a broken tab is shown with a mark and its error toasted:\n%s", out)
	}
	keys(m, "2")
	out = plainScreen(m)
	if !strings.Contains(out, "This tab can't be used") || !strings.Contains(out, `missing required column "status"`) {
		t.Errorf("selecting a broken tab shows its error:\n%s", out)
	}
	keys(m, "j", "s", "space")
	checkFrame(t, screen(m), 80, 24)
}

func TestOnlyInbox(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs = wb.Tabs[:1]
	m := newLoaded(t, wb, 80, 24)
	keys(m, "tab", "2", "3", "j")
	if m.activeTab().name() != "Inbox" || cursorID(m) != "msg-001" {
		t.Errorf("a sheet with only an Inbox works: tab %s cursor %s", m.activeTab().name(), cursorID(m))
	}
}

func TestLayoutFits(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 15}, {100, 30}, {200, 50}} {
		for _, noColor := range []bool{false, true} {
			m := newLoaded(t, testWorkbook(t), size[0], size[1], func(o *Options) { o.NoColor = noColor })
			for _, step := range [][]string{nil, {"j", "j", "j", "j", "j", "j", "j"}, {"p"}, {"enter"}, {"esc", "2", "s"}, {"esc", "3", "?"}, {"esc", "1", "/", "a"}} {
				keys(m, step...)
				checkFrame(t, screen(m), size[0], size[1])
			}
		}
	}
}

func TestKeyMapRebind(t *testing.T) {
	km := DefaultKeyMap()
	if err := km.Rebind("down", []string{"n", "ctrl+n"}); err != nil {
		t.Fatal(err)
	}
	err := km.Rebind("downn", []string{"x"})
	if err == nil || !strings.Contains(err.Error(), `"downn"`) || !strings.Contains(err.Error(), "half_down") {
		t.Errorf("unknown action error must name it and list valid ones: %v", err)
	}
	if err := km.Rebind("replay", nil); err != nil {
		t.Fatal(err)
	}
	if km.Replay.Enabled() {
		t.Error("an empty list unbinds")
	}
	for _, a := range []string{"up", "down", "top", "bottom", "half_down", "half_up", "page_down", "page_up", "next_tab", "prev_tab",
		"detail", "preview", "filter", "clear", "mark", "mark_all", "unmark_all", "set_status", "clear_error", "replay", "copy", "undo",
		"refresh", "help", "quit", "discard", "requeue_stale", "replay_all", "copy_link", "cancel"} {
		if !strings.Contains(","+strings.Join(km.Actions(), ",")+",", ","+a+",") {
			t.Errorf("Actions() lacks %q", a)
		}
	}
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.KeyMap = km })
	keys(m, "j")
	if cursorID(m) != "msg-000" {
		t.Error("j no longer moves after rebinding down")
	}
	keys(m, "n")
	if cursorID(m) != "msg-001" {
		t.Error("n moves down after rebinding")
	}
	keys(m, "?")
	if !strings.Contains(plainScreen(m), "n/ctrl+n") {
		t.Errorf("help shows the new keys:\n%s", plainScreen(m))
	}
}

func TestNoColorHasMarkers(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.NoColor = true })
	keys(m, "space", "k")
	out := screen(m)
	if strings.ContainsRune(out, 0x1b) {
		t.Fatal("NO_COLOR output has escape sequences")
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[3], ">*") {
		t.Errorf("cursor and mark are visible without color: %q", lines[3])
	}
	if !strings.Contains(lines[1], "[1 Inbox") {
		t.Errorf("active tab is bracketed: %q", lines[1])
	}
}

func TestAutoRefresh(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Refresh = time.Minute })
	cmd := send(m, refreshTickMsg{})
	if cmd == nil || !m.loading {
		t.Fatal("a refresh tick while idle starts a load")
	}
	send(m, refreshTickMsg{})
	if seq := m.loadSeq; seq != 2 {
		t.Errorf("a tick during a load doesn't start another: seq %d", seq)
	}
}

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

func TestMouseWheel(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.activeTab().cursor != 3 {
		t.Errorf("wheel down moves 3 rows: cursor %d", m.activeTab().cursor)
	}
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.activeTab().cursor != 0 {
		t.Errorf("wheel up moves back: cursor %d", m.activeTab().cursor)
	}
}

func TestSetStatusFromDetail(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "space", "space", "j", "enter", "s", "4") // marks elsewhere; the detail acts on its record
	if !m.writing || len(m.inflight.edits) != 1 || m.inflight.edits[0].ID != "msg-003" {
		t.Fatalf("s in the detail view changes the shown record only: %+v", m.inflight)
	}
	op := *m.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 5}}}})
	if m.detail == nil || !strings.Contains(plainScreen(m), "Status         done") {
		t.Errorf("the detail view shows the new status:\n%s", plainScreen(m))
	}
}

func TestHelpScrollsWhenTooTall(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 60, 15)
	keys(m, "?")
	seen := map[string]bool{}
	for i := 0; i < 30; i++ {
		for _, l := range strings.Split(plainScreen(m), "\n") {
			seen[strings.TrimSpace(l)] = true
		}
		keys(m, "j")
	}
	all := strings.Join(mapKeys(seen), "\n")
	for _, g := range m.c.keys.fullHelp() {
		for _, b := range g.bindings {
			if !strings.Contains(all, b.Help().Key) {
				t.Errorf("help at 60x15 never shows %q, even scrolled", b.Help().Key)
			}
		}
	}
	keys(m, "k")
	if m.helpOffset <= 0 {
		t.Error("k scrolls back up right away (the offset is clamped, not left past the end)")
	}
}

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestShownMarksStayCounted checks the incrementally kept count of marks the filter hides
// against a rescan, through marks, filters and a write.
func TestShownMarksStayCounted(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	ts := m.activeTab()
	check := func(step string) {
		t.Helper()
		_, hidden := ts.targets()
		if ts.nMarked == 0 {
			hidden = 0
		}
		if got := ts.hiddenMarks(); got != hidden {
			t.Fatalf("%s: hiddenMarks %d, a rescan says %d", step, got, hidden)
		}
	}
	steps := [][]string{{"space", "space", "j", "space"}, {"/", "a", "enter"}, {"space", "k", "space"}, {"*"},
		{"/", "backspace", "s", "t", "a", "t", "u", "s", ":", "r", "e", "a", "d", "enter"}, {"space", "space"},
		{"esc"}, {"j", "space"}, {"V"}, {"space"}}
	for i, s := range steps {
		keys(m, s...)
		check(fmt.Sprint("step ", i, " ", s))
	}
	keys(m, "s", "4", "y")
	if m.inflight != nil {
		op := *m.inflight
		send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0]}}}})
		check("after a write")
	}
}

// A workbook the CLI already loaded is shown without a second load.
func TestInitialWorkbookSkipsTheFirstLoad(t *testing.T) {
	wb := testWorkbook(t)
	st := &memStore{wb: func() *model.Workbook { return testWorkbook(t) }}
	m := New(Options{Store: st, Initial: wb, Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	var got bool
	for _, msg := range cmdMsgs(t, m.Init()) {
		if lm, ok := msg.(loadedMsg); ok {
			got = lm.wb == wb && lm.err == nil
			send(m, msg)
		}
	}
	if !got {
		t.Fatal("Init did not hand over the initial workbook")
	}
	if n := st.loadCount(); n != 0 {
		t.Errorf("the store was loaded %d times; the initial workbook should have been used", n)
	}
	if !strings.Contains(plainScreen(m), "Inbox") {
		t.Errorf("initial workbook not shown:\n%s", plainScreen(m))
	}
}
