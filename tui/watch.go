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

// watchState is the runs of other people this session knows of, and the one it watches. It is
// a component of the one shape (Update(msg) (watchState, action)): the root carries out its
// actions (Model.onEffect, action.go).
type watchState struct {
	c      *common
	sr     SharedRuns // the Replayer's SharedRuns side, nil when it has none
	others []RunInfo  // other people's runs in progress (footer, P)
	mine   RunInfo    // this session's own run as the hub tells of it (who cancelled it)
	seq    int        // tells watches apart: a late message of an old watch is dropped
	w      RunWatch
	runID  uint64     // the watched run's RunInfo.ID
	run    *replayRun // the watched run (finished: its report, until another is opened)
	show   bool       // its progress view is on screen
	// opening is a Watch in flight (P pressed), so a second P doesn't open another.
	opening bool
	// refusal is why this person may not cancel the watched run (RunWatch.CancelRefusal, asked
	// off the UI goroutine when it opened), "" when they may: the footer offers x only then.
	refusal string
}

// The actions only watchState.Update returns (the generic ones are action.go's), which the
// root carries out (Model.onEffect).
type (
	// runStartedAction: another person started run id; toast text while it is news.
	runStartedAction struct {
		id   uint64
		text string
	}
	// myRunAction: the hub's word on this session's own run (who cancelled it).
	myRunAction struct{ info RunInfo }
	// haltAction: the halt banner shows h.
	haltAction struct {
		h   *model.Halt
		tab string // the tab of the run that halted
	}
)

func (runStartedAction) isAction() {}
func (myRunAction) isAction()      {}
func (haltAction) isAction()       {}

// tellsOf reports whether run id is another person's run in progress, not watched now: the
// toast of its start holds while it does.
func (w *watchState) tellsOf(id uint64) bool {
	return !(w.watching() && w.runID == id) && slices.ContainsFunc(w.others, func(o RunInfo) bool { return o.ID == id })
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

// listen waits for the next change of the runs, off the UI goroutine; nil without SharedRuns.
func (w watchState) listen() tea.Cmd {
	sr := w.sr
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

// Update takes the messages of watching (the hub's runs, a watch opened, a watched run's
// progress, a cancel's answer, a confirmed cancel) and the keys of the watched run's view.
func (w watchState) Update(msg tea.Msg) (watchState, action) {
	switch msg := msg.(type) {
	case runsMsg:
		return w.onRuns(msg)
	case watchOpenedMsg:
		return w.onOpened(msg)
	case watchEventsMsg:
		a := w.onEvents(msg)
		return w, a
	case watchCancelledMsg:
		if msg.err == nil {
			return w, nil
		}
		if r := w.run; r != nil && msg.seq == w.seq && !r.finished {
			r.cancelling = false
		}
		return w, toastAction{toastError, fmt.Sprintf("cancel refused: %v", msg.err)}
	case watchCancelAction:
		return w, w.cancel(msg)
	case tea.KeyPressMsg, tea.MouseWheelMsg:
		return w.onKey(msg)
	}
	return w, nil
}

// onRuns takes the runs as of now: a toast for each run another person started, the hub's
// word on this session's own run, and listens again.
func (w watchState) onRuns(msg runsMsg) (watchState, action) {
	if !msg.ok {
		return w, nil
	}
	var acts actions
	known := map[uint64]bool{}
	for _, o := range w.others {
		known[o.ID] = true
	}
	var others []RunInfo
	p := firstKey(w.c.keys.Progress)
	for _, r := range msg.runs {
		if r.Mine {
			w.mine = r
			acts = append(acts, myRunAction{r})
			continue
		}
		others = append(others, r)
		if !known[r.ID] {
			// Told until it is watched or has ended: then it would be news of the past.
			text := fmt.Sprintf("%s started replaying %s%s", cellLine(r.Who), cellLine(r.Tab), withHintKey(" (", p, " shows it)"))
			acts = append(acts, runStartedAction{id: r.ID, text: text})
		}
	}
	w.others = others
	return w, append(acts, cmdAction{w.listen()})
}

// withHintKey is pre+key+post, or "" when the key is unbound.
func withHintKey(pre, key, post string) string {
	if key == "" {
		return ""
	}
	return pre + key + post
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

// refusal is why R/A on tab can't start: another person replays it (how to watch); "" when
// nobody else does.
func (w *watchState) refuseRun(tab string) string {
	o := w.otherRun(tab)
	if o == nil {
		return ""
	}
	return fmt.Sprintf("%s is replaying %s %d/%d%s; try again when it ends", cellLine(o.Who), cellLine(o.Tab), o.Done, o.Total,
		withHintKey(" · ", firstKey(w.c.keys.Progress), " shows it"))
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

// showOthers is P when this session has no run of its own going (own: its last run, or nil):
// the run another person is making (opened, or shown again), else the newest finished report.
// ok is false when there is nothing of anyone else's to show.
func (w watchState) showOthers(own *replayRun) (_ watchState, _ action, ok bool) {
	wr := w.run
	if wr != nil && !wr.finished {
		w.show = true
		return w, showRunAction{watched: true}, true
	}
	if len(w.others) > 0 && (wr == nil || w.others[0].ID != w.runID) {
		if w.opening {
			return w, nil, true
		}
		o := w.others[0]
		w.opening = true
		w.seq++
		sr, seq := w.sr, w.seq
		return w, cmdAction{func() tea.Msg {
			rw, ok := sr.Watch(o.Tab)
			msg := watchOpenedMsg{seq: seq, w: rw, ok: ok, tab: o.Tab}
			if ok {
				msg.refusal = rw.CancelRefusal()
			}
			return msg
		}}, true
	}
	if wr != nil && (own == nil || wr.ended.After(own.ended)) {
		w.show = true // the newer of the two reports
		return w, showRunAction{watched: true}, true
	}
	return w, nil, false
}

// onOpened shows the run just opened: its plan's rows, queued until they move.
func (w watchState) onOpened(msg watchOpenedMsg) (watchState, action) {
	if msg.seq != w.seq {
		if msg.ok {
			msg.w.Close()
		}
		return w, nil
	}
	w.opening = false
	if !msg.ok {
		return w, toastAction{toastInfo, fmt.Sprintf("the replay of %s has already ended", cellLine(msg.tab))}
	}
	if w.w != nil {
		w.w.Close()
	}
	info, plan := msg.w.Info(), msg.w.Plan()
	run := &replayRun{
		c: w.c, id: w.seq, tab: info.Tab, who: info.Who, sources: plan.Sources, prog: model.NewRunProgress(plan.Calls), calls: len(plan.Calls),
		started: w.c.now().Add(-msg.w.Elapsed()), cancel: func() {}, follow: true,
	}
	if info.CancelledBy != "" {
		run.cancelling, run.cancelledBy = true, info.CancelledBy
	}
	w.w, w.run, w.runID, w.refusal = msg.w, run, info.ID, msg.refusal
	w.show = true
	return w, actions{showRunAction{watched: true, spin: true}, cmdAction{watchNext(msg.w, msg.seq)}}
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

// onEvents applies a batch of the watched run's progress; at its end, its report (and its
// halt's banner, as the starter sees it). It changes w only through pointers (the run, the
// others' slice is replaced below), so w is taken by pointer.
func (w *watchState) onEvents(msg watchEventsMsg) action {
	r := w.run
	if r == nil || msg.seq != w.seq || r.finished {
		return nil
	}
	var acts actions
	if h := r.apply(msg.events); h != nil {
		acts = append(acts, haltAction{h, r.tab})
	}
	if msg.sum == nil {
		if msg.events == nil {
			return acts // closed
		}
		return append(acts, cmdAction{watchNext(w.w, msg.seq)})
	}
	if msg.cancelledBy != "" {
		r.cancelledBy = msg.cancelledBy
	}
	if h := r.finish(*msg.sum, w.c.now()); h != nil {
		acts = append(acts, haltAction{h, r.tab})
	}
	w.w.Close()
	// The run is over: the footer stops telling of it before the hub's notice says so.
	w.others = slices.DeleteFunc(w.others, func(o RunInfo) bool { return o.ID == w.runID })
	more := ""
	if k := firstKey(w.c.keys.Progress); !w.show && k != "" {
		more = " · " + k + " shows the report"
	}
	return append(acts, toastAction{toastInfo, fmt.Sprintf("%s %s: %s%s", r.label(), runOutcomeWord(r), reportCounts(*msg.sum), more)})
}

// onKey handles a key (or the mouse wheel) in the watched run's view: as the starter's, but cancel asks first (and
// only an operator may) and leaving it leaves the run alone. The run view's other actions
// (help, refresh, a note) go up as they are.
func (w watchState) onKey(msg tea.Msg) (watchState, action) {
	var a action
	w.run, a = w.run.Update(msg)
	r := w.run
	switch a := a.(type) {
	case cancelRunAction:
		return w, w.askCancel()
	case hideRunAction:
		w.show = false
		if a.goesOn {
			return w, toastAction{toastInfo, fmt.Sprintf("%s goes on%s", r.label(), withHintKey(": ", firstKey(w.c.keys.Progress), " shows it again"))}
		}
		return w, nil
	default:
		return w, a
	}
}

// askCancel is cancel in the watched run's view: refused with the reason for someone who may
// not, else a confirm naming the starter (default No).
func (w watchState) askCancel() action {
	r, rw := w.run, w.w
	if r.cancelling {
		return toastAction{toastInfo, "already cancelling: calls in flight finish and are written back"}
	}
	if why := w.c.roleRefusal(model.AccessOperator, "cancel "+r.label()); why != "" {
		return toastAction{toastInfo, why} // names the person, their role and the role that may
	}
	if why := rw.CancelRefusal(); why != "" {
		return toastAction{toastInfo, why} // the replayer's word, as the hub will check it
	}
	question := func() string {
		return fmt.Sprintf("Cancel %s (%d/%d)?", r.label(), r.prog.Done, r.prog.Total)
	}
	d := newConfirm(w.c, question(), []string{fmt.Sprintf("Calls in flight finish and their outcomes are written back; nothing new starts. %s is told you cancelled it.", cellLine(r.who))}, writeOp{})
	d.live = question
	d.yes = watchCancelAction{seq: w.seq}
	d.yesLabel = "cancel it"
	return dialogAction{d}
}

// cancel asks the hub to cancel the watched run (confirmed), off the UI goroutine.
func (w watchState) cancel(a watchCancelAction) action {
	r, rw := w.run, w.w
	if a.seq != w.seq || r == nil || r.finished {
		return toastAction{toastInfo, "that replay has already ended"}
	}
	r.cancelling = true
	return actions{
		cancelNoteAction{fmt.Sprintf("cancelling %s: calls in flight finish and are written back; nothing new starts", r.label())},
		cmdAction{func() tea.Msg { return watchCancelledMsg{seq: a.seq, err: rw.Cancel()} }},
	}
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
