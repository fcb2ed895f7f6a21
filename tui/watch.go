// Replays across sessions (`triage serve`): the runs other people started, told of in a toast
// and the footer, and their live progress, opened with P: the same view as the starter's,
// read-only except for an operator's cancel (after a confirm naming the starter).

package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/triage-dev/triage/model"
)

// SharedRuns is a Replayer whose runs are shared with other people (`triage serve`'s
// per-session replayer). The TUI asks for it by type assertion: a local Replayer needn't
// implement it, and the TUI knows nothing of the server behind it.
type SharedRuns interface {
	// Runs are the replays in progress, this session's own included (Mine), as of now.
	Runs() []RunInfo
	// RunsChanged receives a value whenever Runs may have changed (a run started, moved,
	// was cancelled or ended). It holds one, so a slow session skips intermediate ones; it
	// is closed when the session ends.
	RunsChanged() <-chan struct{}
	// Watch opens the live progress of the run in progress on tab; ok is false when there is
	// none. It may compute the run's plan: the TUI calls it from a tea.Cmd.
	Watch(tab string) (w RunWatch, ok bool)
}

// RunInfo is a replay in progress as the footer and the toasts tell of it.
type RunInfo struct {
	// ID tells runs apart (a new run on the same tab is another run).
	ID uint64
	// Who started it, and on which tab.
	Who, Tab string
	// Done and Total are the run's calls with an outcome and planned.
	Done, Total int
	// Mine is true for the run this session started.
	Mine bool
	// CancelledBy is who cancelled it ("" while nobody has).
	CancelledBy string
}

// RunWatch is the live progress of a run someone else started. Its methods are safe to call
// from any goroutine.
type RunWatch interface {
	// Info is the run as of now.
	Info() RunInfo
	// Plan is what the run sends: its calls are the progress view's rows.
	Plan() model.ReplayPlan
	// Elapsed is how long the run has been going, as of the Watch.
	Elapsed() time.Duration
	// Next blocks until there is progress: each row's newest state since the last call, then
	// the run's newest counts (intermediate states of a row may be skipped, so a slow
	// watcher never holds up the run). sum is the run's report once it has ended; nil
	// events and sum once the watch is closed.
	Next() (events []model.ReplayEvent, sum *model.ReplaySummary)
	// CancelRefusal is why this person may not cancel the run, "" when they may.
	CancelRefusal() string
	// Cancel stops the run from starting anything new, as this person: calls in flight finish
	// and are written back. The error says why it was refused.
	Cancel() error
	// Close stops watching: a Next waiting returns.
	Close()
}

// watchState is the runs of other people this session knows of, and the one it watches.
type watchState struct {
	others []RunInfo // other people's runs in progress (footer, P)
	mine   RunInfo   // this session's own run as the hub tells of it (who cancelled it)
	seq    int       // tells watches apart: a late message of an old watch is dropped
	w      RunWatch
	runID  uint64     // the watched run's RunInfo.ID
	run    *replayRun // the watched run (finished: its report, until another is opened)
	show   bool       // its progress view is on screen
	listH  int
	// opening is a Watch in flight (P pressed), so a second P doesn't open another.
	opening bool
	// refusal is why this person may not cancel the watched run (RunWatch.CancelRefusal, asked
	// off the UI goroutine when it opened), "" when they may: the footer offers x only then.
	refusal string
}

// runsMsg is the hub's runs as of a change (ok false: the session ended).
type runsMsg struct {
	runs []RunInfo
	ok   bool
}

// watchOpenedMsg is the result of Watch.
type watchOpenedMsg struct {
	seq     int
	w       RunWatch
	ok      bool
	tab     string
	refusal string // w.CancelRefusal()
}

// watchEventsMsg is a batch of a watched run's progress; sum is its report once it ended.
type watchEventsMsg struct {
	seq         int
	events      []model.ReplayEvent
	sum         *model.ReplaySummary
	cancelledBy string
}

// watchCancelAction: the user confirmed cancelling the run they watch.
type watchCancelAction struct{ seq int }

func (watchCancelAction) isAction() {}

// watchCancelledMsg is the answer of RunWatch.Cancel.
type watchCancelledMsg struct {
	seq int
	err error
}

// sharedRuns is the Replayer's SharedRuns side, nil when it has none.
func (m *Model) sharedRuns() SharedRuns {
	sr, _ := m.opts.Replayer.(SharedRuns)
	return sr
}

// listenRuns waits for the next change of the runs, off the UI goroutine.
func (m *Model) listenRuns() tea.Cmd {
	sr := m.sharedRuns()
	if sr == nil {
		return nil
	}
	ch := sr.RunsChanged()
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return runsMsg{}
		}
		return runsMsg{runs: sr.Runs(), ok: true}
	}
}

// onRuns takes the runs as of now: a toast for each run another person started, the cancel
// of this session's own run by another person, and listens again.
func (m *Model) onRuns(msg runsMsg) tea.Cmd {
	if !msg.ok {
		return nil
	}
	var cmds []tea.Cmd
	known := map[uint64]bool{}
	for _, o := range m.watch.others {
		known[o.ID] = true
	}
	var others []RunInfo
	p := firstKey(m.c.keys.Progress)
	for _, r := range msg.runs {
		if r.Mine {
			cmds = append(cmds, m.onMyRunInfo(r))
			continue
		}
		others = append(others, r)
		if !known[r.ID] {
			// Told until it is watched or has ended: then it would be news of the past.
			id := r.ID
			text := fmt.Sprintf("%s started replaying %s%s", cellLine(r.Who), cellLine(r.Tab), withHintKey(" (", p, " shows it)"))
			cmds = append(cmds, m.toasts.pushWhile(toastInfo, text, func() bool {
				return !(m.watch.watching() && m.watch.runID == id) && slices.ContainsFunc(m.watch.others, func(o RunInfo) bool { return o.ID == id })
			}))
		}
	}
	m.watch.others = others
	cmds = append(cmds, m.listenRuns())
	return tea.Batch(cmds...)
}

// withHintKey is pre+key+post, or "" when the key is unbound.
func withHintKey(pre, key, post string) string {
	if key == "" {
		return ""
	}
	return pre + key + post
}

// onMyRunInfo notices another person's cancel of this session's own run: the run is then
// cancelling, and the view and the report name who cancelled it.
func (m *Model) onMyRunInfo(r RunInfo) tea.Cmd {
	m.watch.mine = r
	run := m.replay.run
	if run == nil || run.finished || r.CancelledBy == "" || run.cancelledBy != "" {
		return nil
	}
	run.cancelledBy = r.CancelledBy
	if run.cancelling {
		return nil // cancelled here first
	}
	run.cancelling = true
	return m.cancelNote(fmt.Sprintf("%s cancelled your replay: calls in flight finish and are written back; nothing new starts", cellLine(r.CancelledBy)))
}

// otherRun is another person's run in progress on tab, nil when there is none.
func (w *watchState) otherRun(tab string) *RunInfo {
	for i, r := range w.others {
		if strings.EqualFold(r.Tab, tab) {
			return &w.others[i]
		}
	}
	return nil
}

// refuseOthersRun is why R/A on tab can't start: another person replays it (how to watch).
func (m *Model) refuseOthersRun(tab string) tea.Cmd {
	o := m.watch.otherRun(tab)
	if o == nil {
		return nil
	}
	return m.toast(toastInfo, "%s is replaying %s %d/%d%s; try again when it ends", cellLine(o.Who), cellLine(o.Tab), o.Done, o.Total,
		withHintKey(" · ", firstKey(m.c.keys.Progress), " shows it"))
}

// statusLine is the footer's line of another person's run: "alice is replaying 37/120 · P
// shows it" (P: the progress key, "" when unbound); "" when nobody else replays.
func (w *watchState) statusLine(progress string) string {
	if len(w.others) == 0 {
		return ""
	}
	o := w.others[0]
	s := fmt.Sprintf("%s is replaying %d/%d", cellLine(o.Who), o.Done, o.Total)
	if o.CancelledBy != "" {
		s = fmt.Sprintf("%s's replay is cancelling %d/%d", cellLine(o.Who), o.Done, o.Total)
	}
	if n := len(w.others) - 1; n > 0 {
		s += fmt.Sprintf(" (+%d more)", n)
	}
	return s + withHintKey(" · ", progress, " shows it")
}

// watching reports whether the watched run's view is on screen.
func (w *watchState) watching() bool { return w.show && w.run != nil }

// showOthersRun is P when this session has no run of its own going: the run another person
// is making (opened, or shown again), else the newest finished report. ok is false when there
// is nothing of anyone else's to show.
func (m *Model) showOthersRun() (tea.Cmd, bool) {
	wr := m.watch.run
	if wr != nil && !wr.finished {
		m.showWatch()
		return nil, true
	}
	if len(m.watch.others) > 0 && (wr == nil || m.watch.others[0].ID != m.watch.runID) {
		if m.watch.opening {
			return nil, true
		}
		o := m.watch.others[0]
		m.watch.opening = true
		m.watch.seq++
		sr, seq := m.sharedRuns(), m.watch.seq
		return func() tea.Msg {
			w, ok := sr.Watch(o.Tab)
			msg := watchOpenedMsg{seq: seq, w: w, ok: ok, tab: o.Tab}
			if ok {
				msg.refusal = w.CancelRefusal()
			}
			return msg
		}, true
	}
	if wr != nil && (m.replay.run == nil || wr.ended.After(m.replay.run.ended)) {
		m.showWatch() // the newer of the two reports
		return nil, true
	}
	return nil, false
}

// showWatch puts the watched run's view on screen.
func (m *Model) showWatch() {
	m.watch.show = true
	m.replay.showRun = false
	m.detail = nil
	m.prompt.open = false
}

// onWatchOpened shows the run just opened: its plan's rows, queued until they move.
func (m *Model) onWatchOpened(msg watchOpenedMsg) tea.Cmd {
	if msg.seq != m.watch.seq {
		if msg.ok {
			msg.w.Close()
		}
		return nil
	}
	m.watch.opening = false
	if !msg.ok {
		return m.toast(toastInfo, "the replay of %s has already ended", cellLine(msg.tab))
	}
	if m.watch.w != nil {
		m.watch.w.Close()
	}
	info, plan := msg.w.Info(), msg.w.Plan()
	run := &replayRun{
		id: m.watch.seq, tab: info.Tab, who: info.Who, sources: plan.Sources, byID: map[string]int{}, states: map[model.RowState]int{},
		total: len(plan.Calls), started: m.c.now().Add(-msg.w.Elapsed()), cancel: func() {}, follow: true,
	}
	for _, c := range plan.Calls {
		run.byID[c.ID] = len(run.rows)
		run.rows = append(run.rows, runRow{id: c.ID, source: c.Source, url: c.URL, row: c.Row, state: model.StateQueued})
	}
	run.calls = len(run.rows)
	run.states[model.StateQueued] = len(run.rows)
	if info.CancelledBy != "" {
		run.cancelling, run.cancelledBy = true, info.CancelledBy
	}
	m.watch.w, m.watch.run, m.watch.runID, m.watch.refusal = msg.w, run, info.ID, msg.refusal
	m.showWatch()
	return tea.Batch(watchNext(msg.w, msg.seq), m.spinner.Tick)
}

// watchNext waits for the watched run's next progress, off the UI goroutine.
func watchNext(w RunWatch, seq int) tea.Cmd {
	return func() tea.Msg {
		events, sum := w.Next()
		msg := watchEventsMsg{seq: seq, events: events, sum: sum}
		if sum != nil {
			msg.cancelledBy = w.Info().CancelledBy
		}
		return msg
	}
}

// onWatchEvents applies a batch of the watched run's progress; at its end, its report (and
// its halt's banner, as the starter sees it).
func (m *Model) onWatchEvents(msg watchEventsMsg) tea.Cmd {
	r := m.watch.run
	if r == nil || msg.seq != m.watch.seq || r.finished {
		return nil
	}
	if h := r.apply(msg.events); h != nil {
		m.replay.halt = h
	}
	if msg.sum == nil {
		if msg.events == nil {
			return nil // closed
		}
		return watchNext(m.watch.w, msg.seq)
	}
	if msg.cancelledBy != "" {
		r.cancelledBy = msg.cancelledBy
	}
	if h := r.finish(*msg.sum, m.c.now()); h != nil {
		m.replay.halt = h
	}
	m.watch.w.Close()
	// The run is over: the footer stops telling of it before the hub's notice says so.
	m.watch.others = slices.DeleteFunc(m.watch.others, func(o RunInfo) bool { return o.ID == m.watch.runID })
	more := ""
	if k := firstKey(m.c.keys.Progress); !m.watch.show && k != "" {
		more = " · " + k + " shows the report"
	}
	return m.toast(toastInfo, "%s %s: %s%s", r.label(), runOutcomeWord(r), reportCounts(*msg.sum), more)
}

// onWatchKey handles a key in the watched run's view: as the starter's, but cancel asks
// first (and only an operator may) and leaving it leaves the run alone.
func (m *Model) onWatchKey(msg tea.KeyPressMsg) tea.Cmd {
	r := m.watch.run
	switch a := r.Update(msg, m.c.keys, m.watch.listH).(type) {
	case cancelRunAction:
		return m.askCancelWatched()
	case hideRunAction:
		m.watch.show = false
		if a.goesOn {
			return m.toast(toastInfo, "%s goes on%s", r.label(), withHintKey(": ", firstKey(m.c.keys.Progress), " shows it again"))
		}
		return nil
	default:
		return m.onRunAction(a)
	}
}

// askCancelWatched is cancel in the watched run's view: refused with the reason for someone
// who may not, else a confirm naming the starter (default No).
func (m *Model) askCancelWatched() tea.Cmd {
	r, w := m.watch.run, m.watch.w
	if r.cancelling {
		return m.toast(toastInfo, "already cancelling: calls in flight finish and are written back")
	}
	if why := m.roleRefusal(model.AccessOperator, "cancel "+r.label()); why != "" {
		return m.toast(toastInfo, "%s", why) // names the person, their role and the role that may
	}
	if why := w.CancelRefusal(); why != "" {
		return m.toast(toastInfo, "%s", why) // the replayer's word, as the hub will check it
	}
	question := func() string {
		return fmt.Sprintf("Cancel %s (%d/%d)?", r.label(), r.done, r.total)
	}
	d := newConfirm(m.c, question(), []string{fmt.Sprintf("Calls in flight finish and their outcomes are written back; nothing new starts. %s is told you cancelled it.", cellLine(r.who))}, writeOp{})
	d.live = question
	d.yes = watchCancelAction{seq: m.watch.seq}
	d.yesLabel = "cancel it"
	m.dialog = d
	return nil
}

// cancelWatched asks the hub to cancel the watched run, off the UI goroutine.
func (m *Model) cancelWatched(a watchCancelAction) tea.Cmd {
	m.dialog = nil
	r, w := m.watch.run, m.watch.w
	if a.seq != m.watch.seq || r == nil || r.finished {
		return m.toast(toastInfo, "that replay has already ended")
	}
	r.cancelling = true
	note := m.cancelNote(fmt.Sprintf("cancelling %s: calls in flight finish and are written back; nothing new starts", r.label()))
	return tea.Batch(note, func() tea.Msg { return watchCancelledMsg{seq: a.seq, err: w.Cancel()} })
}

// onWatchCancelled says why a cancel was refused (it was checked first; the hub has the
// last word).
func (m *Model) onWatchCancelled(msg watchCancelledMsg) tea.Cmd {
	if msg.err == nil {
		return nil
	}
	if r := m.watch.run; r != nil && msg.seq == m.watch.seq && !r.finished {
		r.cancelling = false
	}
	return m.toast(toastError, "cancel refused: %v", msg.err)
}

// label names a watched run: "alice's replay of failed_calls"; "the replay" for one's own.
func (r *replayRun) label() string {
	if r.who == "" {
		return "the replay"
	}
	return cellLine(r.who) + "'s replay of " + cellLine(r.tab)
}

// watchTitle is the start of a watched run's title, "" for one's own.
func (r *replayRun) watchTitle() string {
	if r.who == "" {
		return ""
	}
	return r.label() + " · "
}

// updateWatch routes the messages of watching; ok is false for any other message.
func (m *Model) updateWatch(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case runsMsg:
		return m.onRuns(msg), true
	case watchOpenedMsg:
		return m.onWatchOpened(msg), true
	case watchEventsMsg:
		return m.onWatchEvents(msg), true
	case watchCancelledMsg:
		return m.onWatchCancelled(msg), true
	}
	return nil, false
}
