// The detail view as a pager over the table: opening a row, n/N to the next or previous row
// the table shows, and marking a new inbox message read when it is opened.

package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// statusRead is the inbox status a message opened with mark_read_on_open gets.
const statusRead = "read"

// openDetail shows record r of tab ts in the detail view (enter, n, N).
func (m *Model) openDetail(ts *tabState, r *model.Record) tea.Cmd {
	m.detail = newDetail(m.c, ts.data.table, r)
	m.relayout()
	return m.markReadOnOpen(ts, r)
}

// stepDetail opens the row delta rows away from the one shown, in the table's order as
// displayed (its filter and sort), without leaving the view; the table's cursor follows, so
// esc lands on the row last read. The focused field stays the same field where the new row
// has it.
func (m *Model) stepDetail(delta int) tea.Cmd {
	d := m.detail
	ts := m.tabs.named(d.tab)
	if ts == nil || ts.data == nil {
		return nil
	}
	target, ok := detailStep(ts, d, delta)
	if !ok {
		next, k := "next", m.c.keys.PrevRow
		if delta < 0 {
			next, k = "previous", m.c.keys.NextRow
		}
		return m.toasts.sayf(toastInfo, "no %s row: this is the %s of the %d %s shown (%s goes the other way)", next,
			map[bool]string{true: "last", false: "first"}[delta > 0], len(ts.visible), words.Plural(len(ts.visible), "row", "rows"), firstKey(k))
	}
	label := d.focusLabel()
	ts.setCursor(target, m.geo.tableH)
	r, _ := ts.current()
	if r == nil {
		return nil
	}
	query := d.search.query
	m.detail = newDetail(m.c, ts.data.table, r)
	for i, f := range m.detail.fields {
		if cellLine(f.label) == label {
			m.detail.focus = i
			break
		}
	}
	m.relayout()
	if query != "" {
		// The search goes on in the next row, as neomutt's does: n finds it there.
		m.detail.search.query = query
		m.detail.search.find(m.detail.lines)
		m.detail.search.first(0)
		m.detail.showSearch()
	}
	return m.markReadOnOpen(ts, r)
}

// detailStep finds the index in ts.visible of the row delta rows away from the detail's
// record. The record is looked up where the cursor is first (the common case, O(1)), then by
// ID. A record the filter no longer shows (it was just marked read under status:new) left
// its place to the row after it, where the cursor now is: that row is the next one.
func detailStep(ts *tabState, d *detail, delta int) (int, bool) {
	i := -1
	if r, _ := ts.current(); r != nil && r.Row == d.rec.Row && r.ID == d.rec.ID {
		i = ts.cursor
	} else if ri, ok := ts.data.byID[d.rec.ID]; ok && d.rec.ID != "" {
		i = ts.indexOf(ri)
	}
	target := i + delta
	if i < 0 {
		target = ts.cursor
		if delta < 0 {
			target = ts.cursor - 1
		}
	}
	if target < 0 || target >= len(ts.visible) {
		return 0, false
	}
	return target, true
}

// markReadOnOpen marks an inbox message read as it is opened, when the tab's config asks
// for it (mark_read_on_open = true under [tabs.inbox]). It is one ordinary write (by ID,
// expecting the status it was opened with, so a change made meanwhile is a conflict, and u
// undoes it), made only for a row that is new and has an ID, and only when a write could start
// now: never in read-only mode, nor while a write, a replay or a replay plan is in flight.
//
// Then it is skipped, silently, rather than queued: it is a convenience, not something the
// user asked for. A queued mark would land after the user moved on (n n n while the first
// write is out), maybe over a status they set by hand meanwhile; it would hold up a quit; and
// the write queue keeps one write in flight by design. A message skipped stays new, as it
// would without the option, and s marks it.
func (m *Model) markReadOnOpen(ts *tabState, r *model.Record) tea.Cmd {
	t := ts.data.table
	switch {
	case t.Config.Role != model.RoleInbox, !t.Config.MarkReadOnOpen, r.ID == "", r.Status != model.StatusNew,
		!t.HasStatus(statusRead), m.canWrite() != "":
		return nil
	}
	return m.runWrite(writeOp{kind: writeSetStatus, tab: t.Config.Name, edits: []model.Edit{model.SetStatus(t, r, statusRead)}, status: statusRead})
}
