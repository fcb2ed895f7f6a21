package tui

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/triage-dev/triage/model"
)

// Replaying dead letters from the TUI (DESIGN §5, §6).
//
// R (marked rows, else the cursor row) or A (every row the filter shows) snapshots the target
// records and asks Options.Replayer for a Plan; the confirm dialog (default No) states the
// count, the sources and the destinations, and `d` shows the dry run: every call with its
// method, URL, key, source and redacted headers, and every refused row with its reason. `y`
// starts Replayer.Replay in a tea.Cmd with a cancellable context. Its progress callback only
// appends to an in-memory queue (it never blocks the run); a listening Cmd turns the queue
// into messages, so Update sees every row's state change in order. The progress view shows
// per-row states (with their sheet rows), counts per outcome, rate, ETA and elapsed time;
// x/ctrl+c cancel (calls in flight finish and are written back; nothing new starts); esc/q go
// back to the table while the run goes on (the footer keeps a line of its progress, P shows
// the view again). When the run ends the view shows the report, the workbook reloads (the
// cursor stays on its row by ID) and a halt leaves a loud banner naming the cause and the
// fix until it is dismissed. R in the detail view replays the record shown.
//
// While a run is in progress nothing else writes and no load replaces the data under it.

// syncPlanMax is how many rows are planned directly in Update. Replayer.Plan does no I/O, but
// planning 100,000 rows is not a keystroke's work; above this it runs in a Cmd.
const syncPlanMax = 2000

// previewMaxCalls caps the dry-run list in the dialog (`triage replay --dry-run` lists all).
const previewMaxCalls = 2000

// replayPlannedMsg carries a plan to Update (directly, or from the planning Cmd).
type replayPlannedMsg struct {
	seq    int
	tab    string
	all    bool // A: every row the filter shows
	snap   *model.Table
	recs   []*model.Record
	hidden int    // marked rows the filter hides (left alone)
	filter string // the tab's filter when the replay was asked for, "" without one
	plan   ReplayPlan
}

// replayStartAction: the user said yes to a planned replay.
type replayStartAction struct{ seq int }

// quitAction: the user confirmed quitting during a run.
type quitAction struct{}

func (replayStartAction) isAction() {}
func (quitAction) isAction()        {}

// snapshot copies the target records (and the table's header and config) so a run reads data
// Update never touches again: setCells replaces a record's Cells rather than writing into it,
// so a copied Record never sees a later write. t.Records of the snapshot is exactly recs.
func snapshot(t *model.Table, idx []int32) (*model.Table, []*model.Record) {
	snap := *t
	snap.Records = make([]model.Record, len(idx))
	recs := make([]*model.Record, len(idx))
	for i, ri := range idx {
		snap.Records[i] = t.Records[ri]
		snap.Records[i].Problems = append([]string(nil), t.Records[ri].Problems...)
		recs[i] = &snap.Records[i]
	}
	return &snap, recs
}

// startReplay answers R (all=false) and A (all=true) in the table, and R in the detail view
// (inDetail: the record shown, whatever is marked).
func (m *Model) startReplay(all, inDetail bool) tea.Cmd {
	ts := m.activeTab()
	if inDetail {
		ts = m.tabNamed(m.detail.tab)
	}
	if ts == nil || ts.data == nil {
		return nil
	}
	if ts.cfg.Role != model.RoleDeadLetter {
		return m.toast(toastInfo, "replay is for dead letters (the %s tab)", model.DefaultTabName(model.RoleDeadLetter))
	}
	var detailIdx []int32
	if inDetail {
		_, p, _ := m.collectTargets(true)
		switch {
		case p.gone > 0:
			return m.goneToast(p.gone)
		case p.noID.n > 0:
			return m.toast(toastError, "%s", p.noID.note())
		case len(p.ids) == 0:
			return nil
		}
		_, ri, _ := ts.data.record(p.ids[0])
		detailIdx = []int32{ri}
	}
	if m.opts.Replayer == nil {
		return m.replayHint(ts, all, inDetail)
	}
	switch {
	case m.running():
		return m.toast(toastInfo, "a replay is already running")
	case m.planning:
		return nil
	case m.writing:
		return m.toast(toastInfo, "a write is still in progress; try again when it finishes")
	}
	var idx []int32
	hidden := 0
	switch {
	case inDetail:
		idx = detailIdx
	case all:
		idx = ts.visible
	default:
		idx, hidden = ts.targets()
	}
	if len(idx) == 0 {
		return m.toast(toastInfo, "no row to replay")
	}
	m.planSeq++
	snap, recs := snapshot(ts.data.table, idx)
	msg := replayPlannedMsg{seq: m.planSeq, tab: ts.name(), all: all, snap: snap, recs: recs, hidden: hidden}
	if !inDetail {
		msg.filter = ts.filterQuery()
	}
	rp := m.opts.Replayer
	if len(recs) <= syncPlanMax {
		msg.plan = rp.Plan(snap, recs)
		return m.onReplayPlanned(msg)
	}
	m.planning = true
	return tea.Batch(m.toast(toastInfo, "planning the replay of %d rows…", len(recs)), func() tea.Msg {
		msg.plan = rp.Plan(snap, recs)
		return msg
	})
}

// onReplayPlanned opens the confirm dialog for a plan.
func (m *Model) onReplayPlanned(msg replayPlannedMsg) tea.Cmd {
	if msg.seq != m.planSeq {
		return nil
	}
	m.planning = false
	if m.dialog != nil || m.running() {
		// Something else took the screen while a big plan was computed: don't clobber it.
		return m.toast(toastInfo, "the replay plan was dropped because another dialog is open; press R or A again")
	}
	m.pendingReplay = &msg
	m.dialog = newReplayConfirm(m.c, msg)
	return nil
}

// newReplayConfirm builds the dialog that states what a replay will do.
func newReplayConfirm(c *common, msg replayPlannedMsg) confirm {
	p := msg.plan
	n := len(p.Calls)
	var question string
	var yes action
	switch {
	case c.readOnly:
		question = fmt.Sprintf("Read-only: nothing will be sent. A replay would send %d %s.", n, plural(n, "call", "calls"))
	case n == 0:
		question = fmt.Sprintf("Nothing to replay: %s refused.", countRows(len(p.Refused)))
	default:
		question = fmt.Sprintf("Replay %d %s to %d %s (%s)?", n, plural(n, "call", "calls"),
			len(p.Sources), plural(len(p.Sources), "source", "sources"), strings.Join(p.Sources, ", "))
		yes = replayStartAction{seq: msg.seq}
	}
	var notes []string
	switch {
	case msg.all && msg.filter != "":
		notes = append(notes, fmt.Sprintf("All %s the filter shows (%s).", countRows(len(msg.recs)), truncate(cellLine(msg.filter), 30)))
	case msg.all:
		notes = append(notes, fmt.Sprintf("All %s of the tab.", countRows(len(msg.recs))))
	case msg.filter != "":
		notes = append(notes, filterNote(msg.filter))
	}
	if msg.hidden > 0 {
		notes = append(notes, fmt.Sprintf("%s hidden by the filter %s left alone.", countRows(msg.hidden)+" marked", plural(msg.hidden, "is", "are")))
	}
	var refused, skipped []RefusedRow
	for _, r := range p.Refused {
		if r.Skipped {
			skipped = append(skipped, r)
		} else {
			refused = append(refused, r)
		}
	}
	if len(refused) > 0 {
		var rs []string
		for i, r := range refused {
			if i == 2 {
				rs = append(rs, "…")
				break
			}
			rs = append(rs, r.Reason)
		}
		notes = append(notes, fmt.Sprintf("%d refused: %s", len(refused), strings.Join(rs, "; ")))
	}
	if len(skipped) > 0 {
		notes = append(notes, fmt.Sprintf("%s skipped by rule (delivered, rejected or discarded rows are never replayed in bulk).", countRows(len(skipped))))
	}
	d := newConfirm(c, question, notes, writeOp{})
	d.yes = yes
	d.yesLabel = "replay"
	// The destinations on lines of their own, under the question: "→ https://x/api/? [y/N]"
	// read like a URL ending in a question mark.
	if yes != nil {
		d.dests = p.Destinations
	}
	d.list = dryRunLines(p)
	d.listTitle = "Dry run: nothing is sent"
	d.listToggle = true
	d.showList = c.readOnly || (n == 0 && len(p.Refused) > 0)
	return d
}

// countRows is "1 row" / "3 rows".
func countRows(n int) string { return itoa(n) + " " + plural(n, "row", "rows") }

// listSome joins the first n items and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// dryRunLines is the dry-run preview: every call that would be sent, then every refused row.
// Raw text: the dialog sanitises and wraps it.
func dryRunLines(p ReplayPlan) []string {
	var out []string
	out = append(out, fmt.Sprintf("Would send %d %s:", len(p.Calls), plural(len(p.Calls), "call", "calls")))
	for i, c := range p.Calls {
		if i == previewMaxCalls {
			out = append(out, fmt.Sprintf("  … and %d more (triage replay --dry-run lists them all)", len(p.Calls)-i))
			break
		}
		method := c.Method
		if method == "" {
			method = "POST"
		}
		out = append(out, fmt.Sprintf("  %s %s", method, c.URL))
		out = append(out, fmt.Sprintf("      key %s · source %s · row %d", c.Key, c.Source, c.Row))
		for _, h := range c.Headers {
			out = append(out, "      "+h)
		}
	}
	var refused, skipped []RefusedRow
	for _, r := range p.Refused {
		if r.Skipped {
			skipped = append(skipped, r)
		} else {
			refused = append(refused, r)
		}
	}
	for _, g := range []struct {
		title string
		rows  []RefusedRow
	}{{"Refused", refused}, {"Skipped", skipped}} {
		if len(g.rows) == 0 {
			continue
		}
		out = append(out, "", fmt.Sprintf("%s %s:", g.title, countRows(len(g.rows))))
		for _, r := range g.rows {
			out = append(out, "  "+r.Reason) // the reason names the row
		}
	}
	return out
}

// replayHint answers R and A when the TUI has no Replayer: say exactly which command replays
// these rows.
func (m *Model) replayHint(ts *tabState, all, inDetail bool) tea.Cmd {
	var ids []string
	if inDetail {
		ids = []string{m.detail.rec.ID}
	} else if all {
		for _, ri := range ts.visible {
			if id := ts.data.table.Records[ri].ID; id != "" {
				ids = append(ids, id)
			}
		}
	} else if _, p, ok := m.collectTargets(false); ok {
		ids = p.ids
	}
	if len(ids) == 0 {
		return m.toast(toastInfo, "no row to replay")
	}
	more := ""
	if len(ids) > 3 {
		ids, more = ids[:3], " …"
	}
	return m.toast(toastInfo, "replay isn't wired into this TUI; run: triage replay --tab %s %s%s", ts.name(), strings.Join(ids, " "), more)
}

// --- the run ---

// runRow is one planned row's state in a run.
type runRow struct {
	id, source, url string
	row             int
	state           string
	detail          string
	attempts        int
}

// replayRun is a replay in progress (or finished, until its view is closed).
type replayRun struct {
	id      int
	tab     string
	sources []string
	rows    []runRow
	byID    map[string]int
	states  map[string]int // rows per state, live
	done    int
	total   int
	started time.Time
	ended   time.Time
	cancel  context.CancelFunc
	sink    *progressSink

	cancelling bool
	finished   bool
	report     ReplayReport
	halt       *ReplayHalt

	offset int  // scroll of the row list
	follow bool // keep the rows being sent in view until the user scrolls
}

// progressSink is the run's side of the progress channel: the Replayer's callback appends
// (never blocks: a slow screen must not hold up a run), the listening Cmd drains.
type progressSink struct {
	mu     sync.Mutex
	events []ReplayProgress
	notify chan struct{} // capacity 1: "there is something to drain"
	done   chan struct{} // closed when Replay has returned
}

func newProgressSink() *progressSink {
	return &progressSink{notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// push is the progress callback handed to Replayer.Replay.
func (s *progressSink) push(p ReplayProgress) {
	if p.Counts != nil {
		c := make(map[string]int, len(p.Counts))
		for k, v := range p.Counts {
			c[k] = v
		}
		p.Counts = c
	}
	s.mu.Lock()
	s.events = append(s.events, p)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *progressSink) drain() []ReplayProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.events
	s.events = nil
	return ev
}

// replayProgressMsg is a batch of progress events of run id; closed once the run returned.
type replayProgressMsg struct {
	id     int
	events []ReplayProgress
	closed bool
}

// replayDoneMsg is the end of run id.
type replayDoneMsg struct {
	id     int
	report ReplayReport
}

// listen waits for the next batch of progress events.
func (s *progressSink) listen(id int) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-s.notify:
			return replayProgressMsg{id: id, events: s.drain()}
		case <-s.done:
			return replayProgressMsg{id: id, events: s.drain(), closed: true}
		}
	}
}

// running reports whether a replay is in progress (not merely shown).
func (m *Model) running() bool { return m.run != nil && !m.run.finished }

// startRun starts the confirmed replay.
func (m *Model) startRun(seq int) tea.Cmd {
	p := m.pendingReplay
	m.pendingReplay = nil
	if p == nil || p.seq != seq {
		return nil
	}
	if m.c.readOnly {
		return m.toast(toastInfo, "%s", readOnlyNote)
	}
	if m.running() || m.writing {
		return m.toast(toastInfo, "busy: try again when the current write or replay finishes")
	}
	if m.loading {
		// A load in flight would replace the rows the run is about to write back: drop it
		// (the run reloads when it ends).
		m.loadSeq++
		m.loading = false
	}
	m.refreshQueued = false
	m.runSeq++
	ctx, cancel := context.WithCancel(m.ctx)
	run := &replayRun{
		id: m.runSeq, tab: p.tab, sources: p.plan.Sources, byID: map[string]int{}, states: map[string]int{},
		total: len(p.plan.Calls), started: m.c.now(), cancel: cancel, sink: newProgressSink(), follow: true,
	}
	for _, c := range p.plan.Calls {
		run.byID[c.ID] = len(run.rows)
		run.rows = append(run.rows, runRow{id: c.ID, source: c.Source, url: c.URL, row: c.Row, state: "queued"})
	}
	run.states["queued"] = len(run.rows)
	m.run = run
	m.showRun = true
	m.detail = nil
	m.filtering = false
	rp, snap, recs, sink, id := m.opts.Replayer, p.snap, p.recs, run.sink, run.id
	do := func() tea.Msg {
		defer close(sink.done)
		rep := rp.Replay(ctx, snap, recs, sink.push)
		return replayDoneMsg{id: id, report: rep}
	}
	return tea.Batch(do, sink.listen(id), m.spinner.Tick)
}

// cancelRun stops a run from starting anything new. Requests in flight finish (or time out)
// and their outcomes are written back.
func (m *Model) cancelRun() tea.Cmd {
	r := m.run
	if r == nil || r.finished || r.cancelling {
		return nil
	}
	r.cancelling = true
	r.cancel()
	return m.toast(toastInfo, "cancelling… calls in flight finish and are written back; nothing new starts")
}

// onReplayProgress applies a batch of events and keeps listening.
func (m *Model) onReplayProgress(msg replayProgressMsg) tea.Cmd {
	r := m.run
	if r == nil || msg.id != r.id || r.finished {
		// A batch drained just before the run's end arrives after it: the report has
		// already set every row's final state.
		return nil
	}
	m.applyProgress(msg.events)
	if msg.closed {
		return nil
	}
	return r.sink.listen(r.id)
}

func (m *Model) applyProgress(events []ReplayProgress) {
	r := m.run
	for _, ev := range events {
		if ev.Total > 0 {
			r.total = ev.Total
		}
		r.done = max(r.done, ev.Done)
		if ev.Halt != nil && r.halt == nil {
			h := *ev.Halt
			r.halt = &h
			m.halt = &h
		}
		if ev.ID == "" {
			continue
		}
		r.setRow(ev)
	}
}

// setRow records one row's new state.
func (r *replayRun) setRow(ev ReplayProgress) {
	i, ok := r.byID[ev.ID]
	if !ok {
		r.byID[ev.ID] = len(r.rows)
		r.rows = append(r.rows, runRow{id: ev.ID, row: ev.Row})
		i = len(r.rows) - 1
	}
	row := &r.rows[i]
	if row.state != "" {
		r.states[row.state]--
	}
	if ev.State != "" {
		row.state = ev.State
	}
	r.states[row.state]++
	if ev.Detail != "" {
		row.detail = ev.Detail
	}
	if ev.Attempts > 0 {
		row.attempts = ev.Attempts
	}
}

// onReplayDone shows the report, reloads the workbook and leaves the halt banner up.
func (m *Model) onReplayDone(msg replayDoneMsg) tea.Cmd {
	r := m.run
	if r == nil || msg.id != r.id {
		return nil
	}
	m.applyProgress(r.sink.drain())
	rep := msg.report
	for _, row := range rep.Rows {
		if row.ID != "" {
			r.setRow(row)
		}
	}
	// Rows refused inside the run (a key write failed, a row changed since the plan) never
	// get a progress event: without this they would stay "queued" in a finished report.
	for _, x := range rep.Refused {
		if x.ID == "" {
			continue
		}
		state := "refused"
		if x.Skipped {
			state = "skipped"
		}
		if i, ok := r.byID[x.ID]; ok && finalState(r.rows[i].state) && r.rows[i].state != "refused" && r.rows[i].state != "skipped" {
			continue // the run sent it: that outcome stands
		}
		r.setRow(ReplayProgress{ID: x.ID, Row: x.Row, State: state, Detail: x.Reason})
	}
	for _, id := range rep.NotAttempted {
		if i, ok := r.byID[id]; ok && !finalState(r.rows[i].state) {
			r.setRow(ReplayProgress{ID: id, State: "not-attempted"})
		}
	}
	final := 0
	for _, row := range r.rows {
		if finalState(row.state) && row.state != "not-attempted" {
			final++
		}
	}
	// The totals are the list's: every row it shows, every row in an end state.
	r.total = max(r.total, len(r.rows))
	r.done = final
	r.finished = true
	r.report = rep
	r.ended = m.c.now()
	r.cancel()
	if rep.Halt != nil {
		h := *rep.Halt
		r.halt, m.halt = &h, &h
	}
	// Rows whose status the run changed drop their marks; the rest keep them for a retry.
	if ts := m.tabNamed(r.tab); ts != nil && ts.data != nil {
		for _, row := range r.rows {
			switch row.state {
			case "delivered", "duplicate", "rejected":
				if ri, ok := ts.data.byID[row.id]; ok {
					ts.setMark(ri, false)
				}
			}
		}
		ts.countShownMarks()
	}
	var cmds []tea.Cmd
	level := toastInfo // a halt has its banner; the toast is only loud about write-backs
	if len(rep.WriteErrors) > 0 || len(rep.Conflicts) > 0 {
		level = toastError
	}
	more := ""
	if k := firstKey(m.c.keys.Progress); !m.showRun && k != "" {
		more = " · " + k + " shows the report"
	}
	cmds = append(cmds, m.toast(level, "replay %s: %s%s", runOutcomeWord(r), reportCounts(rep), more))
	if m.store != nil {
		m.loading = false
		m.runReload = true
		cmds = append(cmds, m.startLoad())
	}
	if m.quitAfterRun {
		cmds = append(cmds, m.quit())
	}
	return tea.Batch(cmds...)
}

// reportCounts is the end-of-run toast's counts. Rows skipped by rule (delivered, rejected,
// discarded: RefusedRow.Skipped) are in the Replayer's "refused" count, but nothing is wrong
// with them: they are counted apart, and only the others are called refused.
func reportCounts(rep ReplayReport) string {
	skipped := 0
	for _, x := range rep.Refused {
		if x.Skipped {
			skipped++
		}
	}
	counts := make(map[string]int, len(rep.Counts))
	for s, n := range rep.Counts {
		counts[s] = n
	}
	if skipped > 0 {
		counts["refused"] = max(0, counts["refused"]-skipped)
	}
	line := countsLine(counts)
	if skipped == 0 {
		return line
	}
	note := itoa(skipped) + " skipped by rule"
	if line == "nothing sent" {
		return line + "; " + note
	}
	return line + " · " + note
}

// finalState reports whether a row state is an end state.
func finalState(s string) bool {
	switch s {
	case "", "queued", "sending":
		return false
	}
	return true
}

// runOutcomeWord is how a run ended, in one word.
func runOutcomeWord(r *replayRun) string {
	switch {
	case r.halt != nil:
		return "halted"
	case r.report.Cancelled || r.cancelling:
		return "cancelled"
	case r.finished:
		return "finished"
	}
	return "running"
}

// stateOrder lists row states in display order.
var stateOrder = []string{"delivered", "duplicate", "rejected", "systemic", "retryable", "deferred", "refused", "skipped", "not-attempted", "sending", "queued"}

// countsLine renders counts per state in display order, then any other state, zeros left out.
func countsLine(counts map[string]int) string {
	var parts []string
	seen := map[string]bool{}
	for _, s := range stateOrder {
		seen[s] = true
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	var extra []string
	for s, n := range counts {
		if !seen[s] && n > 0 {
			extra = append(extra, s)
		}
	}
	sort.Strings(extra)
	for _, s := range extra {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	if len(parts) == 0 {
		return "nothing sent"
	}
	return strings.Join(parts, " · ")
}

// onRunKey handles the progress view: cancel while running; back to the table (the run goes
// on; the footer keeps its progress and the key that shows this view again); scroll.
func (m *Model) onRunKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	r := m.run
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.Cancel):
		if !r.finished {
			return m.cancelRun()
		}
		m.showRun = false
		return nil
	case msg.String() == "esc" || key.Matches(msg, k.Clear, k.Quit, k.Progress) || (msg.String() == "enter" && r.finished):
		m.showRun = false
		if !r.finished {
			var how []string
			if p := firstKey(k.Progress); p != "" {
				how = append(how, p+" shows it again")
			}
			if c := firstKey(k.Cancel); c != "" {
				how = append(how, c+" cancels it")
			}
			return m.toast(toastInfo, "the replay goes on: %s", cmp.Or(strings.Join(how, ", "), "ctrl+c cancels it"))
		}
		return nil
	case key.Matches(msg, k.Refresh):
		if !r.finished {
			return m.toast(toastInfo, "a replay is running; the table reloads when it ends")
		}
		return m.refresh()
	case key.Matches(msg, k.Replay, k.ReplayAll):
		if !r.finished {
			return m.toast(toastInfo, "a replay is already running")
		}
	case key.Matches(msg, k.Down):
		r.scroll(1, m.runListH)
	case key.Matches(msg, k.Up):
		r.scroll(-1, m.runListH)
	case key.Matches(msg, k.PageDown, k.HalfDown):
		r.scroll(max(1, m.runListH-1), m.runListH)
	case key.Matches(msg, k.PageUp, k.HalfUp):
		r.scroll(-max(1, m.runListH-1), m.runListH)
	case key.Matches(msg, k.Top):
		r.follow, r.offset = false, 0
	case key.Matches(msg, k.Bottom):
		r.scroll(len(r.rows), m.runListH)
	}
	return nil
}

// showProgress is P outside the progress view: show the run (in progress, or the last one's
// report) again.
func (m *Model) showProgress() tea.Cmd {
	if m.run == nil {
		return m.toast(toastInfo, "no replay to show: %s replays the marked rows or the cursor row", firstKey(m.c.keys.Replay))
	}
	m.showRun = true
	m.detail = nil
	m.filtering = false
	return nil
}

// cancelRunKey is x outside the progress view: cancel the run going on in the background.
func (m *Model) cancelRunKey() tea.Cmd {
	if !m.running() {
		return nil
	}
	if m.run.cancelling {
		return m.toast(toastInfo, "already cancelling: calls in flight finish and are written back")
	}
	return m.cancelRun()
}

// runStatusLine is the compact progress of a run going on behind the table (the footer):
// "replaying 37/120 · 2 retryable · x cancels · P shows it".
func (m *Model) runStatusLine() string {
	r := m.run
	k := m.c.keys
	s := fmt.Sprintf("replaying %d/%d", r.done, r.total)
	if r.cancelling {
		s = fmt.Sprintf("cancelling the replay %d/%d", r.done, r.total)
	}
	for _, st := range []string{"rejected", "systemic", "retryable", "deferred", "refused"} {
		if n := r.states[st]; n > 0 {
			s += fmt.Sprintf(" · %d %s", n, st)
		}
	}
	if c := firstKey(k.Cancel); c != "" && !r.cancelling {
		s += " · " + c + " cancels"
	}
	if p := firstKey(k.Progress); p != "" {
		s += " · " + p + " shows it"
	}
	return s
}

// scroll moves the row list; scrolling by hand stops following the rows in flight.
func (r *replayRun) scroll(d, h int) {
	r.follow = false
	r.offset = max(0, min(r.offset+d, len(r.rows)-max(1, h)))
}

// requestQuit is q: plain quit; with a write in flight, quit once its result is in; during
// a run, a confirm that cancels first.
func (m *Model) requestQuit() tea.Cmd {
	if m.writing {
		// Quitting now would cancel the write and drop its result unseen.
		m.quitAfterWrite = true
		return m.toast(toastInfo, "finishing the write… then quitting (ctrl+c quits now)")
	}
	if !m.running() {
		return m.quit()
	}
	if !m.usable() {
		return m.cancelAndQuit()
	}
	d := newConfirm(m.c, fmt.Sprintf("A replay is running (%d/%d). Cancel it and quit?", m.run.done, m.run.total),
		[]string{"Calls in flight finish and their outcomes are written back first; rows not sent stay as they are."}, writeOp{})
	d.yes = quitAction{}
	d.yesLabel = "cancel and quit"
	m.dialog = d
	return nil
}

// cancelAndQuit cancels the run and quits as soon as it has written back; asked again, it
// quits at once (replaying later is harmless: every call keeps its key).
func (m *Model) cancelAndQuit() tea.Cmd {
	if m.quitAfterRun {
		return m.quit()
	}
	m.quitAfterRun = true
	m.cancelRun()
	return m.toast(toastError, "quitting when the calls in flight finish and are written back (ctrl+c again quits now)")
}

// --- the progress view ---

// haltLine is the banner text of a halt.
func haltLine(h *ReplayHalt) string {
	s := "!! HALTED: " + strings.TrimSpace(h.Cause)
	switch {
	case strings.TrimSpace(h.Detail) != "":
		s += " — " + strings.TrimSpace(h.Detail)
	case h.Source != "":
		s += " — source " + h.Source
	}
	return s
}

// bannerMaxLines is how many lines the halt banner may take; past them it is cut.
const bannerMaxLines = 3

// bannerLines is the halt banner: loud, above the body, until esc dismisses it. It wraps over
// as many lines as its text needs (up to bannerMaxLines), each one in the loud style, so the
// cause and the fix are never cut at 80 columns.
func (m *Model) bannerLines(w int) []string {
	if m.halt == nil {
		return nil
	}
	st := m.c.styles
	text := model.SanitizeLine(haltLine(m.halt))
	lines := wrapText(text, w-2)
	if k := firstKey(m.c.keys.Clear); k != "" {
		// The dismiss hint, if it fits without taking another line.
		if withHint := wrapText(text+"  ("+k+" dismisses)", w-2); len(withHint) <= max(1, len(lines)) && len(withHint) <= bannerMaxLines {
			lines = withHint
		}
	}
	if len(lines) > bannerMaxLines {
		lines = lines[:bannerMaxLines]
		lines[bannerMaxLines-1] = truncate(lines[bannerMaxLines-1]+" …", w-2)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		l = fit(" "+l, w)
		if st.NoColor {
			out[i] = l
		} else {
			out[i] = st.HaltBanner.Render(l)
		}
	}
	return out
}

// runHeadLines is the fixed top of the progress view: title, bar, counts, rate.
func (m *Model) runHeadLines(w int) []string {
	st := m.c.styles
	r := m.run
	now := m.c.now()
	end := now
	if r.finished && !r.ended.IsZero() {
		end = r.ended
	}
	elapsed := end.Sub(r.started)
	var title string
	switch {
	case r.finished:
		title = fmt.Sprintf("Replay %s · %d/%d", runOutcomeWord(r), r.done, r.total)
	case r.cancelling:
		title = fmt.Sprintf("Cancelling… %d/%d · calls in flight finish, nothing new starts", r.done, r.total)
	default:
		title = fmt.Sprintf("Replaying %d %s to %s", r.total, plural(r.total, "call", "calls"), cellLine(strings.Join(r.sources, ", ")))
	}
	if !r.finished {
		title = " " + m.spinnerView() + " " + title
	} else {
		title = " " + title
	}
	lines := []string{fitStyled(st.paint(st.Section, title), w)}

	barW := max(10, min(50, w-20))
	filled := 0
	if r.total > 0 {
		filled = r.done * barW / r.total
	}
	pct := 0
	if r.total > 0 {
		pct = r.done * 100 / r.total
	}
	bar := " [" + strings.Repeat("█", filled) + strings.Repeat("░", barW-filled) + "] " + fmt.Sprintf("%d/%d %d%%", r.done, r.total, pct)
	lines = append(lines, fit(bar, w))

	lines = append(lines, fitStyled(" "+m.paintCounts(r.states), w))

	rate, eta := "– rows/s", "ETA –"
	if secs := elapsed.Seconds(); secs >= 1 && r.done > 0 {
		rps := float64(r.done) / secs
		rate = fmt.Sprintf("%.1f rows/s", rps)
		if left := r.total - r.done; left > 0 {
			eta = "ETA " + time.Duration(float64(left)/rps*float64(time.Second)).Round(time.Second).String()
		}
	}
	if r.finished {
		eta = "ended"
	}
	lines = append(lines, fit(" elapsed "+elapsed.Round(time.Second).String()+" · "+rate+" · "+eta, w))
	return lines
}

// paintCounts renders the live per-state counts, each colored by meaning.
func (m *Model) paintCounts(states map[string]int) string {
	st := m.c.styles
	var parts []string
	for _, s := range stateOrder {
		if states[s] > 0 {
			parts = append(parts, st.paint(m.stateStyle(s), fmt.Sprintf("%d %s", states[s], s)))
		}
	}
	if len(parts) == 0 {
		return "nothing to send"
	}
	return strings.Join(parts, st.paint(st.Muted, " · "))
}

func (m *Model) stateStyle(s string) lipgloss.Style {
	st := m.c.styles
	switch s {
	case "delivered", "duplicate":
		return st.RunOK
	case "rejected", "systemic":
		return st.RunBad
	case "retryable", "deferred", "refused", "not-attempted":
		return st.RunWarn
	case "sending":
		return st.RunActive
	}
	return st.Muted
}

// reportLines is the end-of-run report: what wasn't done and why.
func (m *Model) reportLines(w int) []string {
	st := m.c.styles
	r := m.run
	rep := r.report
	var lines []string
	add := func(style lipgloss.Style, s string) {
		for _, l := range wrapText(model.SanitizeLine(s), w-2) {
			lines = append(lines, " "+st.paint(style, l))
		}
	}
	if r.halt != nil {
		add(st.RunBad, "Halted (see the banner): nothing new was sent after it; fix the cause, then replay again, which is harmless for rows already delivered.")
	}
	if rep.Cancelled {
		add(st.RunWarn, "Cancelled: rows not sent stay as they were.")
	}
	if n := len(rep.NotAttempted); n > 0 {
		add(st.RunWarn, fmt.Sprintf("Not attempted (%d): %s", n, listSome(shortIDs(rep.NotAttempted), 5)))
	}
	var refused []string
	for _, x := range rep.Refused {
		if !x.Skipped {
			refused = append(refused, x.Reason)
		}
	}
	if n := len(refused); n > 0 {
		add(st.RunWarn, fmt.Sprintf("Refused (%d): %s", n, listSome(refused, 3)))
	}
	if n := len(rep.WriteErrors); n > 0 {
		add(st.RunBad, fmt.Sprintf("Write-back errors (%d; replaying again is harmless): %s", n, listSome(rep.WriteErrors, 2)))
	}
	if n := len(rep.Conflicts); n > 0 {
		add(st.RunBad, fmt.Sprintf("Write-back conflicts (%d; the sheet changed meanwhile): %s", n, listSome(rep.Conflicts, 2)))
	}
	if len(lines) == 0 {
		add(st.RunOK, "Every planned row got an answer and it was written back.")
	}
	return lines
}

func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = shortID(id)
	}
	return out
}

// runLines renders the progress view as exactly h lines of w cells, and remembers the height
// of its row list for the scroll keys.
func (m *Model) runLines(w, h int) []string {
	st := m.c.styles
	r := m.run
	lines := m.runHeadLines(w)
	if r.finished {
		lines = append(lines, "")
		lines = append(lines, m.reportLines(w)...)
	}
	lines = append(lines, "")
	idW := 16
	srcW := 10
	head := fmt.Sprintf("   %-13s %5s %-*s %-*s %5s  %s", "STATE", "ROW", idW, "ID", srcW, "SOURCE", "TRIES", "DETAIL")
	lines = append(lines, st.paint(st.TableHeader, fit(head, w)))
	listH := max(1, h-len(lines))
	m.runListH = listH
	if r.follow {
		first := len(r.rows)
		for i, row := range r.rows {
			if !finalState(row.state) {
				first = i
				break
			}
		}
		r.offset = max(0, min(first-1, len(r.rows)-listH))
	}
	r.offset = max(0, min(r.offset, len(r.rows)-listH))
	for i := r.offset; i < len(r.rows) && i < r.offset+listH; i++ {
		row := r.rows[i]
		state := fit(cellLine(row.state), 13)
		if !st.NoColor {
			state = m.stateStyle(row.state).Render(state)
		}
		tries := ""
		if row.attempts > 0 {
			tries = itoa(row.attempts)
		}
		detail := row.detail
		if detail == "" && row.state == "queued" {
			detail = row.url
		}
		sheetRow := ""
		if row.row > 0 {
			sheetRow = itoa(row.row)
		}
		line := "   " + state + " " + fitRight(sheetRow, 5) + " " + fit(cellLine(row.id), idW) + " " + fit(cellLine(row.source), srcW) + " " + fitRight(tries, 5) + "  " + cellLine(detail)
		lines = append(lines, fitStyled(line, w))
	}
	return padLines(lines, w, h)
}
