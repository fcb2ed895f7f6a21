// A workbook shared by many TUIs at once (`triage serve`): prepared once, pushed to every
// session through Options.Updates, each session keeping its own view state over it.

package tui

import (
	"context"
	"maps"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// Prepared is a load's result made ready for display: the workbook and the per-tab data the
// TUI derives from it (display order, ID index, column widths, filter text). Built once by
// Prepare, it is shown by any number of TUIs at once: each keeps only its own view state
// (cursor, filter, marks, sort) and never writes to it, copying a tab's data only when its
// own write lands (until the next push replaces it). At 100,000 rows the derived data is
// ~25 MB; sharing it is what keeps a `triage serve` session small. It is immutable and safe
// for concurrent use.
type Prepared struct {
	wb   *model.Workbook
	tabs []*tabData // parallel to wb.Tabs
	err  error
}

// Prepare derives the display data of a load's result: a workbook, or the error the load
// failed with (each TUI then shows it as it shows a failed refresh of its own). It is pure
// computation (about a second per 100,000 rows on one core): call it off any UI goroutine.
func Prepare(wb *model.Workbook, err error) *Prepared {
	if err != nil {
		return &Prepared{err: err}
	}
	msg := preparedMsg(0, wb)
	for _, d := range msg.tabs {
		// Built once for every session: a session's own build would cost each of them
		// ~20 MB at 100,000 rows.
		d.haystacks()
	}
	return &Prepared{wb: msg.wb, tabs: msg.tabs}
}

// Workbook is the prepared workbook, nil when the load failed. It must not be modified.
func (p *Prepared) Workbook() *model.Workbook { return p.wb }

// Err is why the load failed, nil when it didn't.
func (p *Prepared) Err() error { return p.err }

// PreparedLoader is a Store that loads workbooks already prepared and shared with other TUIs
// (`triage serve`'s per-session store): the TUI's loads use LoadPrepared instead of Load, so
// a refresh in one session doesn't derive everything again for that session alone. It is the
// TUI's own seam, not the store contract's (package store): what it returns is the TUI's.
type PreparedLoader interface {
	LoadPrepared(ctx context.Context) (*Prepared, error)
}

// loaded is the result as one TUI installs it: its own shallow copy of each tab's data,
// marked shared so nothing of the original is written (tabData.own).
func (p *Prepared) loaded(seq int) loadedMsg {
	if p.err != nil {
		return loadedMsg{seq: seq, err: p.err}
	}
	tabs := make([]*tabData, len(p.tabs))
	for i, d := range p.tabs {
		c := *d
		c.shared = true
		c.sorted = nil // filled lazily per sort: this session's own
		tabs[i] = &c
	}
	return loadedMsg{seq: seq, wb: p.wb, tabs: tabs}
}

// own makes the data this TUI is about to change its own: the records (their cell slices are
// copied on write by setCells already), the filter text, the counts and the widths. The
// indexes (order, byID) are only ever replaced, never written, and stay shared. Records a
// build of the filter text is reading (filtertext.go) are copied too, once: the build goes
// on over the old ones, as does a refresh's load Cmd over the records and text lent to it
// (tabSet.filtering).
func (d *tabData) own() {
	if !d.shared && !d.lent && !d.readByBuild() {
		return
	}
	t := *d.table
	t.Records = slices.Clone(t.Records)
	d.table = &t
	if d.shared || d.lent {
		d.hay = slices.Clone(d.hay)
	}
	d.lent = false
	if !d.shared {
		return
	}
	d.counts = maps.Clone(d.counts)
	d.natural = slices.Clone(d.natural)
	d.shared = false
}

// pushedMsg is a workbook a hub pushed through Options.Updates (ok false: the channel closed).
type pushedMsg struct {
	msg loadedMsg
	ok  bool
}

// listenCmd waits for the next pushed workbook, off the UI goroutine; Update re-arms it after
// each one, and a closed channel ends it.
func listenCmd(ch <-chan *Prepared) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		p, ok := <-ch
		if !ok || p == nil {
			return pushedMsg{ok: ok}
		}
		return pushedMsg{msg: p.loaded(0), ok: true}
	}
}

// onPushed puts a pushed workbook in place as a load's result is (each tab keeps its cursor,
// filter, marks and sort), then listens again. A replay running or being planned holds its
// snapshot of the rows: the push waits (the newest only) until it is over, as a refresh does.
// A write in flight doesn't hold it: rows are written and shown by ID, so its result lands on
// the new rows as well as on the old.
func (m *Model) onPushed(msg pushedMsg) tea.Cmd {
	if !msg.ok {
		return nil // the hub is gone: stop listening
	}
	next := listenCmd(m.opts.Updates)
	if m.hub.waitPush {
		m.hub.waitPush, m.load.loading = false, false // the push is the first load
	}
	if msg.msg.wb == nil && msg.msg.err == nil {
		return next // a nil push: nothing to show
	}
	if m.replay.running() || m.replay.planning {
		m.hub.pushed = &msg.msg
		return next
	}
	m.hub.pushed = nil
	return tea.Batch(next, m.install(msg.msg))
}

// installHeld puts a push held during a replay in place once the replay is over.
func (m *Model) installHeld() tea.Cmd {
	if m.hub.pushed == nil || m.replay.running() || m.replay.planning {
		return nil
	}
	msg := *m.hub.pushed
	m.hub.pushed = nil
	return m.install(msg)
}
