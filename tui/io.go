package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// Every call to the Store happens in a tea.Cmd built here (invariant 10: Update and View
// never block). Results come back as typed messages that say which request they answer.

// loadTimeout bounds one load, retries included (the store retries 429/5xx itself).
const loadTimeout = 2 * time.Minute

// writeTimeout bounds one write.
const writeTimeout = time.Minute

// loadedMsg is the result of a load: the workbook and its per-tab derived data, or an error.
type loadedMsg struct {
	// seq identifies the load; a result whose seq isn't the latest is stale and dropped.
	seq  int
	wb   *model.Workbook
	tabs []*tabData // parallel to wb.Tabs
	err  error
}

// loadCmd loads the workbook and prepares every tab (sorting, widths), all off the UI
// goroutine. The tabs named in filtering (their filter is set) get their filter text too,
// reusing the lent text of their unchanged rows, so the filter holds on the new rows from the
// first frame; the others get it when they need it (filtertext.go).
// feed, when not nil, is told the store's progress (model.ReportLoadProgress) and closed
// when the load returns.
func loadCmd(ctx context.Context, store Store, seq int, filtering map[string]lentText, feed *progressFeed) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		if feed != nil {
			ctx = model.WithLoadProgress(ctx, feed.report)
			defer close(feed.done)
		}
		if pl, ok := store.(PreparedLoader); ok {
			p, err := pl.LoadPrepared(ctx)
			if err != nil {
				return loadedMsg{seq: seq, err: err}
			}
			return p.loaded(seq)
		}
		wb, err := store.Load(ctx)
		if err != nil {
			return loadedMsg{seq: seq, err: err}
		}
		msg := preparedMsg(seq, wb)
		for i, t := range msg.wb.Tabs {
			if prev, ok := filtering[t.Config.Name]; ok {
				msg.tabs[i].hay = buildHayReusing(t.Records, prev)
			}
		}
		return msg
	}
}

// loadCmd starts the load ld.seq with a feed of its progress: the load, and the Cmd
// listening to its progress (loadprogress.go).
func (ld *loadState) loadCmd(ctx context.Context, store Store, filtering map[string]lentText) tea.Cmd {
	ld.feed, ld.progress = newProgressFeed(), loadProgress{}
	return tea.Batch(loadCmd(ctx, store, ld.seq, filtering, ld.feed), ld.feed.listen())
}

// preloadedCmd hands over a workbook loaded before the program started (the CLI loads once
// to report setup errors before taking the terminal), prepared off the UI goroutine like a
// load, so the first screen costs no second load.
func preloadedCmd(wb *model.Workbook, seq int) tea.Cmd {
	return func() tea.Msg { return preparedMsg(seq, wb) }
}

// preparedMsg is a load's result with what the first screen needs of every tab
// (prepareScreen): the filter text is left for later.
func preparedMsg(seq int, wb *model.Workbook) loadedMsg {
	if wb == nil {
		wb = &model.Workbook{}
	}
	tabs := make([]*tabData, len(wb.Tabs))
	for i, t := range wb.Tabs {
		tabs[i] = prepareScreen(t)
	}
	return loadedMsg{seq: seq, wb: wb, tabs: tabs}
}

// writeKind says what a write was for, which decides its toast and whether it can be undone.
type writeKind int

const (
	writeSetStatus writeKind = iota
	writeClearError
	writeUndo
	writeDiscard
	writeRequeue
	writeEditPayload // E: a dead letter's new payload (edit.go)
)

// writeOp is one batch of edits to one tab: what the user asked for, in one Store.Apply.
type writeOp struct {
	kind   writeKind
	tab    string
	edits  []model.Edit
	status string // the new status, for toasts
	// unmark are marked rows the action skipped (nothing to change there): confirming it
	// unmarks them with the rest, so they don't linger into the next action.
	unmark []string
	// undoes is the undo-stack entry an undo write reverts: popped when the write is sent,
	// pushed back if it fails.
	undoes *writeOp
}

// appliedMsg is the result of a write.
type appliedMsg struct {
	op  writeOp
	res model.ApplyResult
	err error
}

// applyCmd sends a write: one Store.Apply for all of its edits.
func applyCmd(ctx context.Context, store Store, op writeOp) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, writeTimeout)
		defer cancel()
		res, err := store.Apply(ctx, op.edits)
		return appliedMsg{op: op, res: res, err: err}
	}
}

// clockMsg fires once a second so "refreshed 12s ago" and ages stay true. The renderer only
// sends the cells that changed, so this costs a few bytes per second.
type clockMsg struct{}

func clockTick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return clockMsg{} })
}
