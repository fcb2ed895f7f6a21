// The replay run (R, A once confirmed): the run's state, fed by the Replayer's progress
// events and its report, and the progress view's keys. The run is its own component: it
// keeps its rows and counts, and its key handling returns actions the root model carries out.

package tui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// replayState is the root's part of replaying: the plan awaiting confirmation, the run (in
// progress, or finished and shown until closed) and the halt banner, which stays until
// dismissed.
type replayState struct {
	c             *common
	planSeq       int
	planning      bool // a big plan is being computed in a Cmd
	pendingReplay *replayPlannedMsg
	runSeq        int
	run           *replayRun
	showRun       bool // the progress view is on screen
	halt          *model.Halt
	// haltTab is the tab of the run that halted: the banner belongs to that run, so it shows
	// on that tab (and over its progress view), not on others, and a new run takes it down.
	haltTab      string
	quitAfterRun bool // quit once the run has written back
	runReload    bool // the load in flight is the reload after a run: say when it lands
	// cancelToast is the toast that says the run is cancelling: stale once the run ends, so
	// the end takes it down (0: none).
	cancelToast int
}

// replayRun is a replay in progress (or finished, until its view is closed).
type replayRun struct {
	c       *common
	id      int
	tab     string
	sources []string
	// prog is the run's rows, counts per state, done/total and halt (model.RunProgress, the
	// bookkeeping serve's shared runs keep too). Done/Total count calls, never other rows.
	prog    model.RunProgress
	calls   int // prog.Rows[:calls] are the plan's calls; rows after them were refused in the run
	started time.Time
	ended   time.Time
	cancel  context.CancelFunc
	sink    *progressSink

	cancelling bool
	finished   bool
	// who started the run when it is another person's, watched (watch.go); "" for one's own.
	who string
	// cancelledBy is who cancelled it when that was another person ("" otherwise).
	cancelledBy string
	report      model.ReplaySummary

	offset int  // scroll of the row list
	follow bool // keep the rows being sent in view until the user scrolls
	// cursor is the row of the list the user moved to (an index of prog.Rows), once moved
	// is set: enter opens that row's whole result (its detail is cut in the list).
	cursor int
	moved  bool
	listH  int // the height of the row list, as last drawn (lines): the scroll keys' page
}

// progressSink is the run's side of the progress channel: the Replayer's callback appends
// (never blocks: a slow screen must not hold up a run), the listening Cmd drains.
type progressSink struct {
	mu     sync.Mutex
	events []model.ReplayEvent
	notify chan struct{} // capacity 1: "there is something to drain"
	done   chan struct{} // closed when Replay has returned
}

func newProgressSink() *progressSink {
	return &progressSink{notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// push is the progress callback handed to Replayer.Replay.
func (s *progressSink) push(p model.ReplayEvent) {
	if p.Counts != nil {
		c := make(map[model.RowState]int, len(p.Counts))
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

func (s *progressSink) drain() []model.ReplayEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.events
	s.events = nil
	return ev
}

// replayProgressMsg is a batch of progress events of run id; closed once the run returned.
type replayProgressMsg struct {
	id     int
	events []model.ReplayEvent
	closed bool
}

// replayDoneMsg is the end of run id.
type replayDoneMsg struct {
	id     int
	report model.ReplaySummary
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
func (s *replayState) running() bool { return s.run != nil && !s.run.finished }

// startRun starts the confirmed replay.
func (m *Model) startRun(seq int) tea.Cmd {
	p := m.replay.pendingReplay
	m.replay.pendingReplay = nil
	if p == nil || p.seq != seq {
		return nil
	}
	if m.c.readOnly {
		return m.toasts.sayf(toastInfo, "%s", m.c.readOnlyNote())
	}
	if m.replay.running() || m.writes.writing {
		return m.toasts.sayf(toastInfo, "busy: try again when the current write or replay finishes")
	}
	if m.load.loading {
		// A load in flight would replace the rows the run is about to write back: drop it
		// (the run reloads when it ends).
		m.load.seq++
		m.load.loading = false
	}
	m.writes.refreshQueued = false
	m.replay.halt, m.replay.haltTab = nil, "" // the banner of an earlier run is not this one's
	m.replay.runSeq++
	ctx, cancel := context.WithCancel(m.life.ctx)
	run := &replayRun{
		c: m.c, id: m.replay.runSeq, tab: p.tab, sources: p.plan.Sources, prog: model.NewRunProgress(p.plan.Calls), calls: len(p.plan.Calls),
		started: m.c.now(), cancel: cancel, sink: newProgressSink(), follow: true,
	}
	m.replay.run = run
	m.replay.showRun = true
	m.watch.show = false
	m.detail = nil
	m.prompt.open = false
	rp, snap, recs, sink, id := m.opts.Replayer, p.snap, p.recs, run.sink, run.id
	do := func() tea.Msg {
		defer close(sink.done)
		rep := rp.Replay(ctx, snap, recs, sink.push)
		return replayDoneMsg{id: id, report: rep}
	}
	return tea.Batch(do, sink.listen(id), m.spinner.Tick)
}

// cancel stops the run from starting anything new (x in its progress view). Requests in
// flight finish (or time out) and their outcomes are written back; the note saying so comes
// back as a cancelNoteAction.
func (s *replayState) cancel() action {
	if !s.stopRun() {
		return nil
	}
	return cancelNoteAction{"cancelling… calls in flight finish and are written back; nothing new starts"}
}

// cancelNote toasts that the run is cancelling, and remembers the toast so the run's end
// takes it down.
func (m *Model) cancelNote(text string) tea.Cmd {
	cmd := m.toasts.sayf(toastInfo, "%s", text)
	m.replay.cancelToast = m.toasts.next
	return cmd
}

// stopRun cancels the run in progress without a word (the caller says what it means); false
// when there is nothing to cancel.
func (s *replayState) stopRun() bool {
	r := s.run
	if r == nil || r.finished || r.cancelling {
		return false
	}
	r.cancelling = true
	r.cancel()
	return true
}

// Update takes the run's progress (a batch of events: applied, and listening goes on) and the
// keys of its progress view (what the root must do comes back as an action; leaving the view
// of a run in progress says how to get back to it).
func (s replayState) Update(msg tea.Msg) (replayState, action) {
	switch msg := msg.(type) {
	case replayProgressMsg:
		r := s.run
		if r == nil || msg.id != r.id || r.finished {
			// A batch drained just before the run's end arrives after it: the report has
			// already set every row's final state.
			return s, nil
		}
		s.applyProgress(msg.events)
		if msg.closed {
			return s, nil
		}
		return s, cmdAction{r.sink.listen(r.id)}
	case tea.KeyPressMsg, tea.MouseWheelMsg:
		var a action
		s.run, a = s.run.Update(msg)
		if h, ok := a.(hideRunAction); ok {
			s.showRun = false
			if h.goesOn {
				return s, toastAction{toastInfo, s.goesOnNote()}
			}
			return s, nil
		}
		return s, a
	}
	return s, nil
}

// applyProgress applies events to the run; a halt they bring goes up on the banner.
func (s *replayState) applyProgress(events []model.ReplayEvent) {
	if h := s.run.apply(events); h != nil {
		s.halt, s.haltTab = h, s.run.tab
	}
}

// apply takes a batch of progress events in order; it returns the run's halt when this batch
// brought it (the banner shows it until dismissed).
func (r *replayRun) apply(events []model.ReplayEvent) (halt *model.Halt) {
	for _, ev := range events {
		if h := r.prog.Apply(ev); h != nil {
			halt = h
		}
	}
	return halt
}

// onReplayDone shows the report, reloads the workbook and leaves the halt banner up.
func (m *Model) onReplayDone(msg replayDoneMsg) tea.Cmd {
	r := m.replay.run
	if r == nil || msg.id != r.id {
		return nil
	}
	m.replay.applyProgress(r.sink.drain())
	if m.replay.cancelToast != 0 {
		m.toasts.expire(m.replay.cancelToast)
		m.replay.cancelToast = 0
	}
	rep := msg.report
	if h := r.finish(rep, m.c.now()); h != nil {
		m.replay.halt, m.replay.haltTab = h, r.tab
	}
	// Rows whose status the run changed drop their marks; the rest keep them for a retry.
	if ts := m.tabs.named(r.tab); ts != nil && ts.data != nil {
		r.unmarkChanged(ts)
	}
	var cmds []tea.Cmd
	level := toastInfo // a halt has its banner; the toast is only loud about write-backs
	if len(rep.WriteErrors) > 0 || len(rep.WriteConflicts) > 0 {
		level = toastError
	}
	more := ""
	if k := firstKey(m.c.keys.Progress); !m.replay.showRun && k != "" {
		more = " · " + k + " shows the report"
	}
	cmds = append(cmds, m.toasts.sayf(level, "replay %s: %s%s", runOutcomeWord(r), reportCounts(rep), more))
	if m.store != nil {
		m.load.loading = false
		m.replay.runReload = true
		cmds = append(cmds, m.startLoad())
	}
	if m.replay.quitAfterRun {
		// The report would vanish with the screen: it goes to the terminal on the way out.
		m.end.note = fmt.Sprintf("triage: replay %s: %s (%d/%d %s)", runOutcomeWord(r), reportCounts(rep), r.prog.Done, r.prog.Total, words.Plural(r.prog.Total, "call", "calls"))
		if r.prog.Halt != nil {
			m.end.note += "\n" + haltLine(r.prog.Halt)
		}
		if n := len(rep.WriteErrors) + len(rep.WriteConflicts); n > 0 {
			m.end.note += fmt.Sprintf("\n%d %s not written back: replaying again is harmless (every call keeps its key)", n, words.Plural(n, "outcome", "outcomes"))
		}
		cmds = append(cmds, m.quit())
	}
	return tea.Batch(cmds...)
}

// finish takes the run's report: every row's final state, the totals, the halt (returned,
// for the banner, when the report has one). The run is then finished.
func (r *replayRun) finish(rep model.ReplaySummary, now time.Time) *model.Halt {
	for _, row := range rep.Rows {
		if row.ID != "" {
			r.prog.Set(row)
		}
	}
	r.setRefused(rep.Refused)
	for _, id := range rep.NotAttempted {
		if row, ok := r.prog.Row(id); ok && !row.State.Final() {
			r.prog.Set(model.RowResult{ID: id, State: model.StateNotAttempted})
		}
	}
	final := 0
	for _, row := range r.prog.Rows[:r.calls] {
		if row.State.Final() && row.State != model.StateNotAttempted {
			final++
		}
	}
	// The totals stay in calls, the unit the run counted in while it ran; rows refused
	// before a send are in the state counts and the list, not in x/y.
	r.prog.Total = max(r.prog.Total, r.calls)
	r.prog.Done = final
	r.finished = true
	r.report = rep
	r.ended = now
	r.cancel()
	if rep.Halted == nil {
		return nil
	}
	h := *rep.Halted
	r.prog.Halt = &h
	return &h
}

// setRefused marks the rows refused inside the run (a key write failed, a row changed since
// the plan): they never get a progress event, and without this they would stay "queued" in
// a finished report.
func (r *replayRun) setRefused(refused []model.Refusal) {
	for _, x := range refused {
		if x.ID == "" {
			continue
		}
		if row, ok := r.prog.Row(x.ID); ok && row.State.Final() && row.State != model.StateRefused && row.State != model.StateSkipped {
			continue // the run sent it: that outcome stands
		}
		r.prog.Set(model.RowResult{ID: x.ID, Row: x.Row, State: x.State(), Detail: x.Reason})
	}
}

// unmarkChanged drops the marks of the rows of ts whose status the run changed.
func (r *replayRun) unmarkChanged(ts *tabState) {
	for _, row := range r.prog.Rows {
		switch row.State {
		case model.StateDelivered, model.StateDuplicate, model.StateRejected:
			if ri, ok := ts.data.byID[row.ID]; ok {
				ts.setMark(ri, false)
			}
		}
	}
	ts.countShownMarks()
}

// reportCounts is the end-of-run toast's counts. Rows skipped by rule (delivered, rejected,
// discarded: Refusal.Skipped) are counted apart, as nothing is wrong with them.
func reportCounts(rep model.ReplaySummary) string {
	held := 0
	for _, g := range rep.Held {
		held += len(g.IDs)
	}
	skipped := rep.Skipped() - held
	counts := make(map[model.RowState]int, len(rep.Counts))
	for s, n := range rep.Counts {
		if s != model.StateSkipped {
			counts[s] = n
		}
	}
	line := countsLine(counts)
	if held > 0 {
		heldNote := itoa(held) + " being replayed by another run"
		if line == "nothing sent" {
			line += "; " + heldNote
		} else {
			line += " · " + heldNote
		}
	}
	if skipped == 0 {
		return line
	}
	note := itoa(skipped) + " skipped by rule"
	if line == "nothing sent" {
		return line + "; " + note
	}
	return line + " · " + note
}

// runOutcomeWord is how a run ended, in one word.
func runOutcomeWord(r *replayRun) string {
	switch {
	case r.prog.Halt != nil:
		return "halted"
	case r.report.Cancelled || r.cancelling:
		return "cancelled"
	case r.finished:
		return "finished"
	}
	return "running"
}

// stateOrder lists row states in display order.
var stateOrder = []model.RowState{model.StateDelivered, model.StateDuplicate, model.StateRejected, model.StateSystemic,
	model.StateRetryable, model.StateDeferred, model.StateRefused, model.StateSkipped, model.StateNotAttempted,
	model.StateSending, model.StateQueued}

// countsLine renders counts per state in display order, then any other state, zeros left out.
func countsLine(counts map[model.RowState]int) string {
	var parts []string
	seen := map[model.RowState]bool{}
	for _, s := range stateOrder {
		seen[s] = true
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	var extra []model.RowState
	for s, n := range counts {
		if !seen[s] && n > 0 {
			extra = append(extra, s)
		}
	}
	slices.Sort(extra)
	for _, s := range extra {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	if len(parts) == 0 {
		return "nothing sent"
	}
	return strings.Join(parts, " · ")
}

// Actions the progress view returns to the root model, besides help and refresh (keyAction)
// and notes (toastAction).
type (
	// cancelRunAction: cancel the run (calls in flight finish and are written back).
	cancelRunAction struct{}
	// hideRunAction: back to the table; goesOn: the run goes on behind it (say how to get
	// back to it).
	hideRunAction struct{ goesOn bool }
	// showRunAction: a run's view goes on screen, over any other view; watched: another
	// person's (watchState), else one's own (replayState); spin: start the spinner.
	showRunAction struct{ watched, spin bool }
)

func (cancelRunAction) isAction() {}
func (hideRunAction) isAction()   {}
func (showRunAction) isAction()   {}

// Update handles a key in the progress view: cancel while running; back to the table (the
// run goes on; the footer keeps its progress and the key that shows this view again);
// scroll (a page is the row list's height, as last drawn), also with the mouse wheel. What
// the root must do comes back as an action.
func (r *replayRun) Update(msg tea.Msg) (*replayRun, action) {
	k := r.c.keys
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		d := 3
		if msg.Button == tea.MouseWheelUp {
			d = -3
		}
		r.scroll(d, r.listH)
		return r, nil
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.Help):
			return r, keyAction{v: vHelp}
		case key.Matches(msg, k.Cancel):
			if !r.finished {
				return r, cancelRunAction{}
			}
			return r, hideRunAction{}
		case key.Matches(msg, k.Detail) && r.moved:
			// Once the cursor is on a row, enter opens its whole result.
			return r, r.openResult()
		case key.Matches(msg, k.Back, k.Clear, k.Quit, k.Progress) || (key.Matches(msg, k.RunClose) && r.finished):
			return r, hideRunAction{goesOn: !r.finished}
		case key.Matches(msg, k.Refresh):
			if !r.finished {
				return r, toastAction{toastInfo, "a replay is running; the table reloads when it ends"}
			}
			return r, keyAction{v: vRefresh}
		case key.Matches(msg, k.Replay, k.ReplayAll):
			if !r.finished {
				return r, toastAction{toastInfo, "a replay is already running"}
			}
		case key.Matches(msg, k.Down, k.Up):
			r.moveCursor(msg, k)
		default:
			r.scrollKey(msg, k, r.listH)
		}
	}
	return r, nil
}

// moveCursor moves the list's cursor a row (the first move puts it on the first row shown)
// and scrolls to keep it in view; the list stops following the rows in flight.
func (r *replayRun) moveCursor(msg tea.KeyPressMsg, k *KeyMap) {
	if len(r.prog.Rows) == 0 {
		return
	}
	r.follow = false
	switch {
	case !r.moved:
		r.cursor, r.moved = r.offset, true
	case key.Matches(msg, k.Down):
		r.cursor = min(r.cursor+1, len(r.prog.Rows)-1)
	default:
		r.cursor = max(r.cursor-1, 0)
	}
	h := max(1, r.listH)
	if r.cursor < r.offset {
		r.offset = r.cursor
	} else if r.cursor >= r.offset+h {
		r.offset = r.cursor - h + 1
	}
}

// resultHint is the progress view's hint for the cursor row: enter shows its whole result,
// once the cursor is on one (j/k put it there, as the scroll hint says).
func (r *replayRun) resultHint() []key.Binding {
	if !r.moved {
		return nil
	}
	return []key.Binding{withDesc(r.c.keys.Detail, "whole result")}
}

// openResult is enter in the progress view once the cursor is on a row: that row's whole
// result in a dialog: its state, row, ID, source, tries, URL and the detail the list cuts.
func (r *replayRun) openResult() action {
	i := r.cursor
	if !r.moved || i >= len(r.prog.Rows) {
		return nil
	}
	row := r.prog.Rows[i]
	title := cellLine(string(row.State))
	if row.Row > 0 {
		title = "Row " + itoa(row.Row) + ": " + title
	}
	notes := []string{"ID " + cellLine(row.ID)}
	if row.Source != "" {
		notes = append(notes, "source "+cellLine(row.Source))
	}
	if row.Attempts > 0 {
		notes = append(notes, fmt.Sprintf("%d %s", row.Attempts, words.Plural(row.Attempts, "try", "tries")))
	}
	if row.URL != "" {
		notes = append(notes, "to "+cellLine(row.URL))
	}
	if d := strings.TrimSpace(row.Detail); d != "" {
		notes = append(notes, model.SanitizeText(d))
	}
	d := confirm{c: r.c, question: title, notes: notes, wrapped: &wrapCache{}}
	return dialogAction{d}
}

// scrollKey scrolls the row list for a movement key.
func (r *replayRun) scrollKey(msg tea.KeyPressMsg, k *KeyMap, listH int) {
	switch {
	case key.Matches(msg, k.Down):
		r.scroll(1, listH)
	case key.Matches(msg, k.Up):
		r.scroll(-1, listH)
	case key.Matches(msg, k.PageDown, k.HalfDown):
		r.scroll(max(1, listH-1), listH)
	case key.Matches(msg, k.PageUp, k.HalfUp):
		r.scroll(-max(1, listH-1), listH)
	case key.Matches(msg, k.Top):
		r.follow, r.offset = false, 0
	case key.Matches(msg, k.Bottom):
		r.scroll(len(r.prog.Rows), listH)
	}
}

// goesOnNote says, on leaving the progress view of a run in progress, how to get back to it
// and how to cancel it.
func (s *replayState) goesOnNote() string {
	k := s.c.keys
	var how []string
	if p := firstKey(k.Progress); p != "" {
		how = append(how, p+" shows it again")
	}
	if c := firstKey(k.Cancel); c != "" {
		how = append(how, c+" cancels it")
	}
	return "the replay goes on: " + cmp.Or(strings.Join(how, ", "), "ctrl+c cancels it")
}

// show is P outside the progress view, when no other person's run is to be shown
// (watchState.showOthers): show the run (in progress, or the last one's report) again.
func (s *replayState) show() action {
	if s.run == nil {
		k := s.c.keys
		if !s.c.offers(k.Replay) {
			return toastAction{toastInfo, "no replay to show"}
		}
		return toastAction{toastInfo, fmt.Sprintf("no replay to show: %s replays the marked rows or the cursor row", firstKey(k.Replay))}
	}
	s.showRun = true
	return showRunAction{}
}

// cancelKey is x outside the progress view: cancel the run going on in the background.
func (s *replayState) cancelKey() action {
	if !s.running() {
		return nil
	}
	if s.run.cancelling {
		return toastAction{toastInfo, "already cancelling: calls in flight finish and are written back"}
	}
	return s.cancel()
}

// onMyRun notices another person's cancel of this session's own run (the hub's word, r): the
// run is then cancelling, and the view and the report name who cancelled it.
func (s *replayState) onMyRun(r RunInfo) action {
	run := s.run
	if run == nil || run.finished || r.CancelledBy == "" || run.cancelledBy != "" {
		return nil
	}
	run.cancelledBy = r.CancelledBy
	if run.cancelling {
		return nil // cancelled here first
	}
	run.cancelling = true
	return cancelNoteAction{fmt.Sprintf("%s cancelled your replay: calls in flight finish and are written back; nothing new starts", cellLine(r.CancelledBy))}
}

// runStatusLine is the compact progress of a run going on behind the table (the footer):
// "replaying 37/120 · 2 retryable · x cancels · P shows it".
func (st *replayState) statusLine() string {
	r := st.run
	k := st.c.keys
	s := fmt.Sprintf("replaying %d/%d %s", r.prog.Done, r.prog.Total, words.Plural(r.prog.Total, "call", "calls"))
	if r.cancelling {
		s = fmt.Sprintf("cancelling the replay %d/%d %s", r.prog.Done, r.prog.Total, words.Plural(r.prog.Total, "call", "calls"))
	}
	for _, st := range []model.RowState{model.StateRejected, model.StateSystemic, model.StateRetryable, model.StateDeferred, model.StateRefused} {
		if n := r.prog.Counts[st]; n > 0 {
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

// scroll moves the row list (and the cursor with it, when it has one); scrolling by hand
// stops following the rows in flight.
func (r *replayRun) scroll(d, h int) {
	r.follow = false
	r.offset = max(0, min(r.offset+d, len(r.prog.Rows)-max(1, h)))
	if r.moved {
		r.cursor = max(0, min(r.cursor+d, len(r.prog.Rows)-1))
		r.cursor = max(r.offset, min(r.cursor, r.offset+max(1, h)-1))
	}
}

// requestQuit is q: plain quit; with a write in flight, quit once its result is in; during
// a run, a confirm that cancels first.
func (m *Model) requestQuit() tea.Cmd {
	if m.writes.writing {
		// Quitting now would cancel the write and drop its result unseen.
		m.writes.quitAfterWrite = true
		return m.toasts.sayf(toastInfo, "finishing the write… then quitting (ctrl+c quits now)")
	}
	if !m.replay.running() {
		return m.quit()
	}
	if !m.usable() {
		return m.cancelAndQuit()
	}
	run := m.replay.run
	question := func() string {
		return fmt.Sprintf("A replay is running (%d/%d %s done). Cancel it and quit?", run.prog.Done, run.prog.Total, words.Plural(run.prog.Total, "call", "calls"))
	}
	d := newConfirm(m.c, question(),
		[]string{"Calls in flight finish and their outcomes are written back first; rows not sent stay as they are."}, writeOp{})
	d.live = question
	d.yes = quitAction{}
	d.yesLabel = "cancel and quit"
	m.dialog = d
	return nil
}

// cancelAndQuit cancels the run and quits as soon as it has written back; asked again, it
// quits at once (replaying later is harmless: every call keeps its key).
func (m *Model) cancelAndQuit() tea.Cmd {
	if m.replay.quitAfterRun {
		r := m.replay.run
		m.end.note = fmt.Sprintf("triage: quit during a replay (%d/%d %s had an outcome); calls in flight may have been sent without their outcome written back: replaying again is harmless (every call keeps its key)",
			r.prog.Done, r.prog.Total, words.Plural(r.prog.Total, "call", "calls"))
		return m.quit()
	}
	m.replay.quitAfterRun = true
	m.replay.stopRun()
	return m.toasts.sayf(toastError, "quitting when the calls in flight finish and are written back (ctrl+c again quits now)")
}
