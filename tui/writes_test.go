package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

func TestQuitWaitsForTheWriteInFlight(t *testing.T) {
	write := func(t *testing.T) *Model {
		m := newLoaded(t, testWorkbook(t), 80, 24)
		keys(m, "s", "4") // one row: the write starts at once
		if !m.writes.writing {
			t.Fatal("no write in flight")
		}
		return m
	}
	applied := func(m *Model) appliedMsg {
		op := *m.writes.inflight
		return appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0]}}}}
	}

	m := write(t)
	if cmd := send(m, press("q")); isQuit(t, cmd) {
		t.Fatal("q with a write in flight quit at once, dropping its result")
	}
	if out := plainScreen(m); !strings.Contains(out, "finishing the write") || !strings.Contains(out, "then quitting") {
		t.Errorf("q says it waits for the write:\n%s", out)
	}
	if cmd := send(m, press("q")); isQuit(t, cmd) {
		t.Error("a second q still waits (ctrl+c is the way out now)")
	}
	if cmd := send(m, applied(m)); !isQuit(t, cmd) {
		t.Error("the app quits once the write has landed")
	}

	// A second ctrl+c quits at once.
	m = write(t)
	if cmd := send(m, press("ctrl+c")); isQuit(t, cmd) {
		t.Fatal("the first ctrl+c waits for the write")
	}
	if cmd := send(m, press("ctrl+c")); !isQuit(t, cmd) {
		t.Error("the second ctrl+c quits at once")
	}

	// A write that doesn't land is shown, and the app stays.
	m = write(t)
	send(m, press("q"))
	if cmd := send(m, appliedMsg{op: *m.writes.inflight, err: errors.New("boom")}); isQuit(t, cmd) {
		t.Fatal("a failed write must be shown, not quit over")
	}
	if out := plainScreen(m); !strings.Contains(out, "not quitting") || !strings.Contains(out, "write failed: boom") {
		t.Errorf("the failure is shown:\n%s", out)
	}
	if cmd := send(m, press("q")); !isQuit(t, cmd) {
		t.Error("q quits once nothing is in flight")
	}
}

// TestConflictWithReasonLeavesTheRowAlone: a conflict that is not a changed cell (a
// duplicated ID, a column gone from the tab) carries a Reason, no Now, and a Field that may be
// the ID column itself. Nothing of it is written into the local row (the ID used to go
// blank); the toast names the reason, even when a plain conflict comes first.
func TestConflictWithReasonLeavesTheRowAlone(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 250, 30)
	keys(m, "space", "space", "space", "space", "s", "4", "y") // msg-000..003 → done
	if !m.writes.writing || m.writes.inflight == nil || len(m.writes.inflight.edits) != 4 {
		t.Fatalf("the write of 4 rows is in flight: writing=%v inflight=%v", m.writes.writing, m.writes.inflight)
	}
	op := *m.writes.inflight
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
	ts := m.tabs.current()
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

func TestRefreshDuringWriteWaits(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "s", "4") // one row → write starts
	if !m.writes.writing {
		t.Fatal("write should be in flight")
	}
	if cmd := send(m, refreshTickMsg{}); m.load.loading {
		t.Errorf("auto-refresh must not start while a write is in flight (cmd %v)", cmd != nil)
	}
	send(m, press("r"))
	if m.load.loading || !m.writes.refreshQueued {
		t.Errorf("manual refresh waits for the write")
	}
	op := *m.writes.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 2}}}})
	if !m.load.loading {
		t.Errorf("the queued refresh starts when the write finishes")
	}
}

// TestWriteQueueOnItsOwn drives the write queue without the root model: one write in
// flight, the undo stack, and what waits for a write (a refresh, a quit).
func TestWriteQueueOnItsOwn(t *testing.T) {
	var q writeQueue
	e := model.Edit{Tab: "Inbox", ID: "msg-1", Set: map[model.Field]string{model.FStatus: "done"}, Expect: map[model.Field]string{model.FStatus: "new"}}
	op := writeOp{kind: writeSetStatus, tab: "Inbox", edits: []model.Edit{e}, status: "done"}
	q.start(op)
	if !q.writing || q.inflight == nil {
		t.Fatal("start puts the write in flight")
	}
	q.refreshQueued = true
	d := q.finish(appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: e}}}})
	if d.quit || !d.reload || q.writing || q.inflight != nil || q.refreshQueued {
		t.Errorf("finish: %+v, queue %+v", d, q)
	}
	last, ok := q.lastChange()
	if !ok || len(last.edits) != 1 || last.edits[0].ID != "msg-1" {
		t.Fatalf("the applied change is undoable: %+v", q.undo)
	}

	// An undo leaves the stack when sent; failed, it goes back.
	undo := writeOp{kind: writeUndo, tab: "Inbox", edits: inverseAll(last.edits), undoes: &last}
	q.start(undo)
	if _, ok := q.lastChange(); ok {
		t.Error("the undo in flight is off the stack")
	}
	q.finish(appliedMsg{op: undo, err: errors.New("HTTP 503")})
	if _, ok := q.lastChange(); !ok {
		t.Error("a failed undo stays undoable")
	}

	// A quit waits for the write: it happens if everything landed, not otherwise.
	q.start(op)
	q.quitAfterWrite, q.refreshQueued = true, true
	if d := q.finish(appliedMsg{op: op, res: model.ApplyResult{Conflicts: []model.Conflict{{Edit: e}}}}); d.quit || d.reload || d.prefix == "" {
		t.Errorf("a write that didn't all land keeps the app, says why and drops the refresh: %+v", d)
	}
	q.start(op)
	q.quitAfterWrite = true
	if d := q.finish(appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: e}}}}); !d.quit {
		t.Errorf("everything landed: quit: %+v", d)
	}

	// The stack is bounded.
	for range maxUndo + 5 {
		q.start(op)
		q.finish(appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: e}}}})
	}
	if len(q.undo) != maxUndo {
		t.Errorf("undo stack of %d, want at most %d", len(q.undo), maxUndo)
	}
}

// Every hint names the bound key: with undo on U and refresh on F, the write toast says
// "U undoes" and a second conflict "F refreshes"; unbound, the hint is left out.
func TestWriteToastNamesBoundKeys(t *testing.T) {
	km := reboundKeyMap(t, map[string][]string{"undo": {"U"}, "refresh": {"F"}})
	m := newLoaded(t, testWorkbook(t), 120, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "s", "4")
	op := *m.writes.inflight
	e := op.edits[0]
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: e}}}})
	if got := toastTexts(m); !strings.Contains(got, "U undoes") || strings.Contains(got, "u undoes") {
		t.Errorf("toast %q", got)
	}
	keys(m, "j", "s", "4")
	op = *m.writes.inflight
	e = op.edits[0]
	send(m, appliedMsg{op: op, res: model.ApplyResult{Conflicts: []model.Conflict{
		{Edit: e, Row: 3, Field: model.FStatus, Saw: "new", Now: "read"}, {Edit: e, Row: 4, Field: model.FStatus, Saw: "new", Now: "spam"}}}})
	if got := toastTexts(m); !strings.Contains(got, "F refreshes") || strings.Contains(got, "r refreshes") {
		t.Errorf("toast %q", got)
	}

	km.Undo.Unbind()
	m = newLoaded(t, testWorkbook(t), 120, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "s", "4")
	op = *m.writes.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0]}}}})
	if got := toastTexts(m); strings.Contains(got, "undoes") {
		t.Errorf("an unbound undo has no hint: %q", got)
	}
}

// ShutdownMsg (the server going away) lets a write in flight land before quitting, whatever
// its answer, and starts nothing new meanwhile; idle, it quits at once.
func TestShutdownLetsTheWriteLand(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	if !isQuit(t, send(m, ShutdownMsg{})) {
		t.Error("an idle program quits at once")
	}
	m = newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "s", "4")
	if !m.writes.writing {
		t.Fatal("no write in flight")
	}
	op := *m.writes.inflight
	if isQuit(t, send(m, ShutdownMsg{})) {
		t.Fatal("quit with a write in flight")
	}
	keys(m, "j", "s")
	if m.dialog != nil {
		t.Error("a new action started after the shutdown")
	}
	conflict := model.ApplyResult{Conflicts: []model.Conflict{{Edit: op.edits[0], Row: 2, Field: model.FStatus, Saw: "new", Now: "read"}}}
	if !isQuit(t, send(m, appliedMsg{op: op, res: conflict})) {
		t.Error("the write's answer is in (a conflict, even): the program quits")
	}
}
