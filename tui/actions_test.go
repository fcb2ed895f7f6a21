package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// TestSetCellsRederivesProblemsAndWidths: an edit's cells decide the row's time, status,
// problems and column widths, as a load would.
func TestSetCellsRederivesProblemsAndWidths(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 160, 30)
	keys(m, "3")
	ts := m.tabs.current()
	_, ri, _ := ts.data.record("job-1")
	r := &ts.data.table.Records[ri]
	has := func(sub string) bool {
		for _, p := range r.Problems {
			if strings.Contains(p, sub) {
				return true
			}
		}
		return false
	}

	ts.setCells(ri, map[model.Field]string{model.FStatus: "claimed", model.FClaimedAt: "2025-06-01T11:00:00Z"})
	if r.Status != model.StatusClaimed || !r.Time.Equal(testNow.Add(-time.Hour)) {
		t.Errorf("claimed an hour ago: %q %v", r.Status, r.Time)
	}
	ts.setCells(ri, map[model.Field]string{model.FClaimedAt: "someday"})
	if !r.Time.IsZero() || !has(`claimedat "someday" is not a date`) {
		t.Errorf("an unreadable claimedAt: time %v problems %q", r.Time, r.Problems)
	}
	ts.setCells(ri, map[model.Field]string{model.FClaimedAt: ""})
	if has("is not a date") {
		t.Errorf("a blank claimedAt is no problem: %q", r.Problems)
	}
	ts.setCells(ri, map[model.Field]string{model.FStatus: "Paused"})
	if r.Status != "paused" || !has("unknown status") || ts.data.counts["paused"] != 1 {
		t.Errorf("an unknown status: %q %q %v", r.Status, r.Problems, ts.data.counts)
	}
	ts.setCells(ri, map[model.Field]string{model.FStatus: ""})
	if r.Status != model.StatusPending || has("unknown status") || ts.data.counts["paused"] != 0 {
		t.Errorf("blank reads as pending: %q %q %v", r.Status, r.Problems, ts.data.counts)
	}

	// A worker name longer than any loaded widens its column (up to the column's max).
	col := -1
	for i, c := range ts.data.cols {
		if c.field == model.FClaimedBy {
			col = i
		}
	}
	before := ts.data.natural[col]
	ts.setCells(ri, map[model.Field]string{model.FClaimedBy: "worker-eleven"})
	send(m, tea.WindowSizeMsg{Width: 160, Height: 30})
	if ts.data.natural[col] <= before || ts.widths[col] < len("worker-eleven") {
		t.Errorf("the WORKER column grows: natural %d→%d, laid out %d", before, ts.data.natural[col], ts.widths[col])
	}
	if !strings.Contains(plainScreen(m), "worker-eleven") {
		t.Errorf("the whole worker shows:\n%s", plainScreen(m))
	}
}

// TestFilterNotesOnlyWithAFilter: confirms speak of the filter only when one is active.
func TestFilterNotesOnlyWithAFilter(t *testing.T) {
	// A step presses pre, sets filter (when not ""), presses keys, and then the screen must
	// hold want and not hold not (when not "").
	type step struct {
		pre     []string
		filter  string
		keys    []string
		want    string
		not     string
		failure string
	}
	loaded := func(t *testing.T) *Model { return newLoaded(t, testWorkbook(t), 100, 30) }
	replaying := func(t *testing.T) *Model {
		m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
		return m
	}
	cases := []struct {
		name  string
		model func(*testing.T) *Model
		steps []step
	}{
		{"set status", loaded, []step{
			{keys: []string{"space", "space", "s", "4"}, want: "Set status of 2 rows", not: "the filter shows", failure: "no filter, no filter note"},
			{pre: []string{"esc", "V"}, filter: "status:new", keys: []string{"*", "s", "4"}, want: "(only the rows the filter shows: status:new)", failure: "with a filter, the note names it"},
		}},
		{"replay all", replaying, []step{
			{keys: []string{"2", "A"}, want: "All 8 rows of the tab.", not: "filter shows", failure: "A without a filter: every row of the tab"},
			{pre: []string{"esc"}, filter: "source:crm", keys: []string{"A"}, want: "All 7 rows the filter shows (source:crm).", failure: "A with a filter names it"},
			{keys: []string{"esc", "space", "space", "R"}, want: "(only the rows the filter shows: source:crm)", failure: "R on marked rows with a filter names it"},
			{keys: []string{"esc", "V", "R"}, want: "Replay 1 call", not: "rows the filter shows", failure: "R on the cursor row says nothing of the filter"},
		}},
		{"requeue", loaded, []step{
			{keys: []string{"3", "Q"}, want: "Requeue 1 stale claim?", not: "the filter shows", failure: "no filter, no filter note"},
			{pre: []string{"esc"}, filter: "email", keys: []string{"Q"}, want: "the filter shows: email)", failure: "with a filter, the note names it"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.model(t)
			for _, st := range c.steps {
				keys(m, st.pre...)
				if st.filter != "" {
					keys(m, "/")
					typeText(m, st.filter)
					keys(m, "enter")
				}
				keys(m, st.keys...)
				if out := plainScreen(m); !strings.Contains(out, st.want) || st.not != "" && strings.Contains(out, st.not) {
					t.Errorf("%s:\n%s", st.failure, out)
				}
			}
		})
	}
}

func TestNoIDNoteForDeadLettersNamesTheKey(t *testing.T) {
	rows := deadRows()
	dup := append([]string(nil), "2025-05-28T09:00:00Z", "crm", "https://crm.example/api/leads", `{}`, "503", "1", "POST", "k-1", "dead", "")
	rows = append(rows, rowsOf(dup)...)
	wb := testWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rows)
	m := newLoaded(t, wb, 100, 30)
	keys(m, "2", "*", "D")
	got := toastTexts(m)
	if !strings.Contains(got, "skipped") || !strings.Contains(got, "key cell") {
		t.Errorf("a dead letter without identity is about its key:\n%s", got)
	}
	if strings.Contains(got, "fill its ID cell") {
		t.Errorf("dead letters have no ID cell to fill:\n%s", got)
	}
	// Without a problem to quote, the key itself is named.
	tab := wb.Tabs[1]
	r := tab.Records[len(tab.Records)-1]
	r.Problems = nil
	if got := noIDReason(tab, &r); got != "its key k-1 is shared with another row: change one of the key cells in the sheet so each row has its own key" {
		t.Errorf("noIDReason: %q", got)
	}
	// The inbox quotes the row's problem.
	var x noIDInfo
	x.add(wb.Tabs[0], &model.Record{Row: 7, Problems: []string{"no ID: this row can't be changed from triage until its ID cell is filled"}})
	x.add(wb.Tabs[0], &model.Record{Row: 9})
	if got := x.note(); got != "2 rows skipped (first: row 7): no ID: this row can't be changed from triage until its ID cell is filled" {
		t.Errorf("inbox note: %q", got)
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
	setStatusConfirms(t, m)
	setStatusApplied(t, m)
	setStatusUndo(t, m)
}

// setStatusConfirms: the picked status asks to confirm (default No), then y sends the write.
func setStatusConfirms(t *testing.T, m *Model) {
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
	if m.dialog != nil || m.writes.writing {
		t.Fatalf("enter must cancel (default No): dialog %T writing %v", m.dialog, m.writes.writing)
	}
	keys(m, "s", "4", "y")
	if !m.writes.writing || m.writes.inflight == nil || len(m.writes.inflight.edits) != 3 {
		t.Fatalf("y sends the write: writing=%v inflight=%v", m.writes.writing, m.writes.inflight)
	}
	if !strings.Contains(plainScreen(m), "saving 3 rows") {
		t.Errorf("header shows the write in flight:\n%s", plainScreen(m))
	}
	// A second write while one is in flight is refused (one Apply at a time).
	keys(m, "s")
	if m.dialog != nil {
		t.Error("no picker while a write is in flight")
	}
}

// setStatusApplied: the store answers two written, one conflict; the table and the toast show it.
func setStatusApplied(t *testing.T, m *Model) {
	// The store answers: two written, one conflict.
	op := *m.writes.inflight
	conflict := model.Conflict{Edit: op.edits[2], Row: 4, Field: model.FStatus, Saw: "read", Now: "spam"}
	send(m, appliedMsg{op: op, res: model.ApplyResult{
		Applied:   []model.Applied{{Edit: op.edits[0], Row: 2}, {Edit: op.edits[1], Row: 3}},
		Conflicts: []model.Conflict{conflict},
	}})
	ts := m.tabs.current()
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
	if len(m.writes.undo) != 1 || len(m.writes.undo[0].edits) != 2 {
		t.Fatalf("undo stack holds the 2 applied edits: %+v", m.writes.undo)
	}
}

// setStatusUndo: u offers the inverse of what was applied; a failed undo stays undoable.
func setStatusUndo(t *testing.T, m *Model) {
	// Undo: the inverse of what was applied, confirmed (2 rows).
	keys(m, "u")
	c, ok := m.dialog.(confirm)
	if !ok {
		t.Fatalf("undo of 2 rows asks to confirm, got %T", m.dialog)
	}
	for _, e := range c.writeOp().edits {
		if e.Expect[model.FStatus] != "done" || (e.ID == "msg-001" && e.Set[model.FStatus] != "new") || (e.ID == "msg-000" && e.Set[model.FStatus] != "") {
			t.Errorf("undo edit %v should expect done and restore the old value", e)
		}
	}
	keys(m, "y")
	if !m.writes.writing || m.writes.inflight.kind != writeUndo || len(m.writes.undo) != 0 {
		t.Fatalf("undo sent: writing=%v undo stack %d", m.writes.writing, len(m.writes.undo))
	}
	send(m, appliedMsg{op: *m.writes.inflight, err: errors.New("HTTP 503")})
	if len(m.writes.undo) != 1 {
		t.Errorf("a failed undo stays undoable: %d entries", len(m.writes.undo))
	}
	if !strings.Contains(plainScreen(m), "write failed: HTTP 503") {
		t.Errorf("a failed write is reported:\n%s", plainScreen(m))
	}
}

func TestSetStatusSingleRowAndNoID(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "j", "s", "j", "enter") // msg-001 is new; the picker starts there; j → read
	if !m.writes.writing || len(m.writes.inflight.edits) != 1 || m.dialog != nil {
		t.Fatalf("one row writes without a confirm: writing=%v dialog=%T", m.writes.writing, m.dialog)
	}
	if e := m.writes.inflight.edits[0]; e.ID != "msg-001" || e.Set[model.FStatus] != "read" || e.Expect[model.FStatus] != "new" {
		t.Errorf("edit %v", e)
	}
	m = newLoaded(t, testWorkbook(t), 80, 24)
	// msg-005 has no ID; mark it and msg-004 (the rows at positions 5 and 4).
	keys(m, "j", "j", "j", "j", "space", "space", "s", "2")
	if m.writes.writing != true || len(m.writes.inflight.edits) != 1 || m.writes.inflight.edits[0].ID != "msg-004" {
		t.Fatalf("only the row with an ID is written: %+v", m.writes.inflight)
	}
	if !strings.Contains(plainScreen(m), "1 row skipped (row 7): no ID") {
		t.Errorf("skipped rows are reported with the reason:\n%s", plainScreen(m))
	}
}

func TestClearError(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "e")
	if !strings.Contains(plainScreen(m), "the inbox has no sticky errors") {
		t.Errorf("e on the inbox explains:\n%s", plainScreen(m))
	}
	keys(m, "3", "*", "e") // Jobs: only job-3 is an error
	// Marked rows of which only one can be changed: asked, never skipped unseen.
	if out := plainScreen(m); m.writes.writing || !strings.Contains(out, "Clear the sticky error of 1 row?") ||
		!strings.Contains(out, "3 rows skipped: no sticky error (only error rows have one)") {
		t.Fatalf("mixed marks: a confirm naming the skipped rows, got writing=%v:\n%s", m.writes.writing, out)
	}
	keys(m, "y")
	if !m.writes.writing || len(m.writes.inflight.edits) != 1 {
		t.Fatalf("one sticky row: written after the confirm, got writing=%v dialog %T", m.writes.writing, m.dialog)
	}
	if ts := m.tabs.current(); ts.nMarked != 1 {
		t.Errorf("the skipped rows are unmarked with the confirm, the one in flight stays until it lands: %d marked", ts.nMarked)
	}
	e := m.writes.inflight.edits[0]
	if _, blanks := e.Set[model.FLastError]; e.ID != "job-3" || e.Set[model.FStatus] != "pending" || blanks {
		t.Errorf("clear-error edit (pending, the error text kept): %v", e)
	}
	if e.Set[model.FUpdatedAt] != model.FormatTime(testNow) {
		t.Errorf("updatedAt is set from Options.Now: %q", e.Set[model.FUpdatedAt])
	}
}

func TestReadOnly(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Store = nopStore{t: t, readOnly: true} })
	if !strings.Contains(plainScreen(m), "RO ·") {
		t.Errorf("header shows RO:\n%s", plainScreen(m))
	}
	for _, k := range []string{"s", "e", "u"} {
		keys(m, k)
		if m.dialog != nil || m.writes.writing {
			t.Errorf("%s must not start a write in read-only mode", k)
		}
		if !strings.Contains(plainScreen(m), "read-only: opened with --readonly") {
			t.Errorf("%s explains read-only:\n%s", k, plainScreen(m))
		}
	}
}

func TestSetStatusFromDetail(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "space", "space", "j", "enter", "s", "4") // marks elsewhere; the detail acts on its record
	if !m.writes.writing || len(m.writes.inflight.edits) != 1 || m.writes.inflight.edits[0].ID != "msg-003" {
		t.Fatalf("s in the detail view changes the shown record only: %+v", m.writes.inflight)
	}
	op := *m.writes.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 5}}}})
	if m.detail == nil || !strings.Contains(plainScreen(m), "Status         done") {
		t.Errorf("the detail view shows the new status:\n%s", plainScreen(m))
	}
}

// D on marked rows some of which can't be discarded asks (it used to write the one it could
// without a word), names the rest and unmarks them with the confirm.
func TestDiscardMixedMarksConfirms(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "2", "*", "D") // k-1 dead, k-2 rejected, k-3 dead, k-4 delivered
	out := plainScreen(m)
	if m.writes.writing || !strings.Contains(out, "Discard 3 dead letters?") || !strings.Contains(out, "1 row already discarded or delivered") {
		t.Fatalf("mixed marks: a confirm naming the skipped row, writing=%v:\n%s", m.writes.writing, out)
	}
	keys(m, "y")
	ts := m.tabs.current()
	if ri, ok := ts.data.byID["k-4"]; !ok || ts.marked[ri] {
		t.Errorf("the delivered row is unmarked with the confirm")
	}
	if !m.writes.writing || len(m.writes.inflight.edits) != 3 {
		t.Errorf("the three are written: %+v", m.writes.inflight)
	}
}
