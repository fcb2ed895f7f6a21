// The write queue: the one write in flight, what waits for it (a refresh, a quit) and the
// undo stack. The root model sends writes and reads their results through it.

package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// maxUndo is how many applied changes u can walk back.
const maxUndo = 50

// writeQueue is the state of the sheet writes: at most one in flight (Store.Apply is one
// batch), a refresh or a quit that waits for it, and the changes u can undo.
type writeQueue struct {
	c        *common
	writing  bool
	inflight *writeOp // the write being sent, while writing
	// refreshQueued: r came while a write was in flight; load once its result is in.
	refreshQueued bool
	// quitAfterWrite: q (or ctrl+c) came while a write was in flight; quit once its result
	// is in (and shown, if it didn't all land). A second ctrl+c quits at once.
	quitAfterWrite bool
	undo           []writeOp
	// lastErr is the last write's failure to reach the sheet (not a conflict): the header's
	// connection state shows it as it shows a failed load, until a write or a load succeeds.
	lastErr error
	// mustQuit: the program was told to end (ShutdownMsg); it quits once the write in flight
	// has its answer, whatever the answer (nobody is left to read it on screen).
	mustQuit bool
}

// start records op as the write in flight. An undo leaves the stack now, when it is really
// sent (not when it was merely offered).
func (q *writeQueue) start(op writeOp) {
	if op.undoes != nil && len(q.undo) > 0 {
		q.undo = q.undo[:len(q.undo)-1]
	}
	q.writing = true
	q.inflight = &op
}

// lastChange is the change u would undo.
func (q *writeQueue) lastChange() (writeOp, bool) {
	if len(q.undo) == 0 {
		return writeOp{}, false
	}
	return q.undo[len(q.undo)-1], true
}

// writeDone is what the root model does once a write's result is in, as the queue decides.
type writeDone struct {
	quit   bool   // everything landed and a quit was waiting for it
	reload bool   // a refresh was waiting for it
	prefix string // put before the report: why the app didn't quit
}

// finish accounts for the result of the write in flight: a quit that waited for it happens
// only if everything landed (otherwise the app stays so the user sees what didn't, and q
// then quits); an applied change becomes undoable, a failed undo stays undoable.
func (q *writeQueue) finish(msg appliedMsg) writeDone {
	q.writing = false
	q.inflight = nil
	q.lastErr = msg.err
	if _, refused := errors.AsType[*model.AccessError](msg.err); refused {
		q.lastErr = nil // the role, not the connection: the header stays ok
	}
	var d writeDone
	if q.mustQuit {
		return writeDone{quit: true}
	}
	if q.quitAfterWrite {
		q.quitAfterWrite = false
		if msg.err == nil && msg.res.OK() {
			return writeDone{quit: true}
		}
		q.refreshQueued = false
		d.prefix = "not quitting, the write didn't all land: "
	}
	// A refresh queued behind the write starts once the write is accounted for: started
	// before it, its load would be thrown away and read again.
	d.reload = q.refreshQueued
	q.refreshQueued = false
	op := msg.op
	if msg.err != nil {
		if op.undoes != nil {
			q.undo = append(q.undo, *op.undoes) // still undoable
		}
		return d
	}
	if len(msg.res.Applied) > 0 && op.kind != writeUndo {
		applied := make([]model.Edit, len(msg.res.Applied))
		for i, a := range msg.res.Applied {
			applied[i] = a.Edit
		}
		q.undo = append(q.undo, writeOp{kind: op.kind, tab: op.tab, edits: applied})
		if len(q.undo) > maxUndo {
			q.undo = q.undo[1:]
		}
	}
	return d
}

// runWrite sends one Store.Apply for a batch of edits.
func (m *Model) runWrite(op writeOp) tea.Cmd {
	if why := m.canWrite(); why != "" {
		return m.toasts.sayf(toastInfo, "%s", why)
	}
	m.writes.start(op)
	return tea.Batch(applyCmd(m.life.ctx, m.store, op), m.spinner.Tick)
}

// writtenAction is what the root does once a write's answer is in (writeQueue.Update): quit,
// or show what landed in the tab, load again if a refresh waited for the write, and say what
// happened.
type writtenAction struct {
	quit   bool // everything landed and a quit waited for it
	reload bool // a refresh waited for it
	op     writeOp
	res    *model.ApplyResult // what the sheet answered; nil when the write failed
	toast  bool
	level  toastLevel
	failed string   // the report of a write that failed (res nil)
	prefix string   // before the report: why the app didn't quit
	parts  []string // the report: what was done, then (if anything) what wasn't and why
	hint   string   // after the report: how to undo it
}

func (writtenAction) isAction() {}

// Update takes a write's answer (appliedMsg): the queue accounts for it (finish) and says what
// the root does (writtenAction). One toast per write: what was done, then (loudly, if
// anything) what wasn't and why.
func (q writeQueue) Update(msg tea.Msg) (writeQueue, action) {
	am, ok := msg.(appliedMsg)
	if !ok {
		return q, nil
	}
	d := q.finish(am)
	if d.quit {
		return q, writtenAction{quit: true}
	}
	a := writtenAction{reload: d.reload, op: am.op}
	if am.err != nil {
		a.toast, a.level = true, toastError
		if _, refused := errors.AsType[*model.AccessError](am.err); refused {
			// Refused for the person's role before anything was sent: the sheet is as shown.
			a.failed = fmt.Sprintf("%snot written: %v", d.prefix, am.err)
		} else {
			a.failed = fmt.Sprintf("%swrite failed: %v (%s refreshes to show the sheet as it is)", d.prefix, am.err, firstKey(q.c.keys.Refresh))
		}
		return q, a
	}
	res := am.res
	a.res = &res
	a.parts = writeReport(am.op, res, keySays(q.c.keys.Refresh, "refreshes"))
	switch {
	case !res.OK():
		a.toast, a.level, a.prefix = true, toastError, d.prefix
	case len(a.parts) > 0 && am.op.kind != writeUndo:
		a.toast, a.level, a.hint = true, toastInfo, keySays(q.c.keys.Undo, "undoes")
	case len(a.parts) > 0:
		a.toast, a.level = true, toastInfo
	}
	return q, a
}

// report is the toast's text. A write that ended after a switch to another tab (active) names
// the tab it changed.
func (a writtenAction) report(active *tabState) string {
	if a.res == nil {
		return a.failed
	}
	parts := slices.Clone(a.parts)
	if len(parts) > 0 && a.op.kind != writeUndo && (active == nil || !strings.EqualFold(active.name(), a.op.tab)) {
		parts[0] = cellLine(a.op.tab) + ": " + parts[0]
	}
	return withHint(a.prefix+strings.Join(parts, "; "), " · ", a.hint)
}

// onWritten carries out a write's answer: the rows it changed are updated in place.
func (m *Model) onWritten(a writtenAction) tea.Cmd {
	if a.quit {
		return m.quit()
	}
	var cmds []tea.Cmd
	if ts := m.tabs.named(a.op.tab); a.res != nil && ts != nil && ts.data != nil {
		ts.showApplied(*a.res, m.c.now(), m.geo.tableH)
		m.load.dataGen++
		m.tabs.gen++
		m.syncDetail()
	}
	if a.reload {
		// After the dataGen bump, so this load isn't thrown away as stale.
		cmds = append(cmds, m.startLoad())
	}
	if a.toast {
		cmds = append(cmds, m.toasts.sayf(a.level, "%s", a.report(m.tabs.current())))
	}
	return tea.Batch(cmds...)
}

// showApplied puts what a write did into the tab: applied edits in place (and unmarked), a
// conflict's cell as the sheet holds it now; the cursor stays on its row, or at the same
// place if the row left the filter.
func (ts *tabState) showApplied(res model.ApplyResult, now time.Time, tableH int) {
	for _, a := range res.Applied {
		if _, ri, ok := ts.data.record(a.Edit.ID); ok {
			ts.setCells(ri, a.Edit.Set)
			ts.setMark(ri, false)
		}
	}
	if o := ts.hist.open; o != nil {
		// The row may also be among the loaded rows kept aside while history's are shown
		// (history.go): they show the change when they are back.
		ts.data, ts.hist.open = o, ts.data
		for _, a := range res.Applied {
			if _, ri, ok := ts.data.record(a.Edit.ID); ok {
				ts.setCells(ri, a.Edit.Set)
			}
		}
		ts.data, ts.hist.open = ts.hist.open, ts.data
	}
	for _, c := range res.Conflicts {
		if c.Reason != "" {
			// Not a changed cell (a duplicated ID, a column gone from the tab): Now holds
			// nothing and Field may be the ID column itself, so there is no value to show;
			// the toast carries the reason.
			continue
		}
		// Show the value the sheet holds now: that is what the user must decide on.
		if _, ri, ok := ts.data.record(c.Edit.ID); ok {
			ts.setCells(ri, map[model.Field]string{c.Field: c.Now})
		}
	}
	ts.recountStale(now)
	idx := ts.cursor
	_, cur := ts.current()
	ts.refilter()
	if i := ts.indexOf(cur); i >= 0 {
		ts.cursor = i
	} else {
		// The row left the filter (e.g. status:new → done): stay at the same place, so the
		// next row comes up, as in a mail client.
		ts.cursor = max(0, min(idx, len(ts.visible)-1))
	}
	ts.scrollTo(tableH)
}

// writeReport is the toast's parts for a write's result: what was done, then what wasn't.
// refresh is the hint for seeing the sheet as it is now ("r refreshes", "" if unbound).
func writeReport(op writeOp, res model.ApplyResult, refresh string) []string {
	var parts []string
	if n := len(res.Applied); n > 0 {
		parts = append(parts, appliedPhrase(op, n))
	}
	if n := len(res.Conflicts); n > 0 {
		// Name a conflict with a Reason first: it needs fixing in the sheet (a duplicated ID, a
		// missing column), and no cell on screen shows it.
		first := res.Conflicts[0]
		for _, c := range res.Conflicts {
			if c.Reason != "" {
				first = c
				break
			}
		}
		s := fmt.Sprintf("%d %s: %s", n, words.Plural(n, "conflict", "conflicts"), first.String())
		if n > 1 {
			s += fmt.Sprintf(" (and %d more%s)", n-1, withHint("", "; ", refresh))
		}
		parts = append(parts, s)
	}
	if n := len(res.Damaged); n > 0 {
		s := res.Damaged[0].String()
		if n > 1 {
			s += fmt.Sprintf(" (and %d more)", n-1)
		}
		parts = append(parts, s)
	}
	if n := len(res.Recovered); n > 0 {
		// Another triage's unfinished write was settled first: say what it had left where.
		s := res.Recovered[0].String()
		if n > 1 {
			s += fmt.Sprintf(" (and %d more)", n-1)
		}
		parts = append(parts, s)
	}
	if n := len(res.Missing); n > 0 {
		ids := make([]string, 0, 4)
		for i, e := range res.Missing {
			if i == 3 {
				ids = append(ids, "…")
				break
			}
			ids = append(ids, shortID(e.ID))
		}
		parts = append(parts, fmt.Sprintf("%d no longer in %s, not written: %s", n, op.tab, strings.Join(ids, ", ")))
	}
	return parts
}

// appliedPhrase says what n applied edits of op did.
func appliedPhrase(op writeOp, n int) string {
	switch op.kind {
	case writeSetStatus:
		return fmt.Sprintf("%d set to %s", n, op.status)
	case writeClearError:
		return fmt.Sprintf("%d %s cleared, back to %s", n, words.Plural(n, "error", "errors"), op.status)
	case writeUndo:
		return fmt.Sprintf("undone on %s: %s restored (%s)", cellLine(op.tab), countRows(n), backTo(op.edits))
	case writeDiscard:
		return fmt.Sprintf("%d discarded", n)
	case writeRequeue:
		return fmt.Sprintf("%d stale %s requeued, back to pending", n, words.Plural(n, "claim", "claims"))
	case writeEditPayload:
		return "new payload written"
	}
	return ""
}
