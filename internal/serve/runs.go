// Replays across sessions: one run per tab, its progress fanned out to everyone who watches
// it (never holding the run up), and its cancel by the starter or another operator.

package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// tabRun is a replay in progress on a tab: who started it, how far it is (prog: done/total,
// the halt, every row's newest state in the order the rows first moved, for a watcher who
// opens it late) and its watchers. Guarded by the hub's mu.
type tabRun struct {
	id          uint64
	s           *session // the starter's session
	who, tab    string
	prog        model.RunProgress
	started     time.Time
	plan        model.ReplayPlan
	cancel      context.CancelFunc
	cancelledBy string
	watchers    map[*runWatch]struct{}
	ended       chan struct{} // closed when the run has returned; sum is then its report
	sum         model.ReplaySummary
}

// String is how another person is told about it: "alice is replaying failed_calls 37/120".
func (r *tabRun) String() string {
	return fmt.Sprintf("%s is replaying %s %d/%d", r.who, r.tab, r.prog.Done, r.prog.Total)
}

// busy is the refusal of a replay of a tab someone else replays.
func (r *tabRun) busy() string {
	return r.String() + "; try again when it ends, or watch its progress (P)"
}

// info is the run as session s is told of it.
func (r *tabRun) info(s *session) tui.RunInfo {
	return tui.RunInfo{ID: r.id, Who: r.who, Tab: r.tab, Done: r.prog.Done, Total: r.prog.Total, Mine: r.s == s, CancelledBy: r.cancelledBy}
}

// notifyRuns tells every session the runs changed, without waiting (each holds one notice).
// Called with h.mu held.
func (h *Hub) notifyRuns() {
	for s := range h.sessions {
		select {
		case s.runs <- struct{}{}:
		default:
		}
	}
}

// sessionReplayer is a session's tui.Replayer: the person's role and one run per tab across
// sessions are checked before anything is sent. It is also the session's tui.SharedRuns.
type sessionReplayer struct{ s *session }

var _ tui.SharedRuns = (*sessionReplayer)(nil)

// refusal is why this person can't replay tab now, "" when they can.
func (r *sessionReplayer) refusal(tab string) string {
	u := r.s.u
	if !u.Access.CanReplay() {
		return (&model.AccessError{Who: u.Name, Role: u.Access, Why: "only an operator can replay dead letters"}).Error()
	}
	h := r.s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if run := h.runs[tabKey(tab)]; run != nil {
		return run.busy()
	}
	return ""
}

// Plan is the hub replayer's plan, or every row refused with the reason this person can't
// replay now (the confirm dialog says it, and offers nothing to confirm).
func (r *sessionReplayer) Plan(t *model.Table, recs []*model.Record) model.ReplayPlan {
	if why := r.refusal(t.Config.Name); why != "" {
		return model.ReplayPlan{Refused: refuseAll(recs, why)}
	}
	return r.s.h.replayer.Plan(t, recs)
}

// Replay runs the hub's replayer as this person (the write-back's triaged_by) if their role
// allows and nobody replays the tab; else every row is refused with why, nothing sent. Every
// session is told the run started, moved and ended; its watchers get its progress and its
// report. When the run ends, the sheet is read and pushed to everyone (the outcomes it wrote
// back).
func (r *sessionReplayer) Replay(ctx context.Context, t *model.Table, recs []*model.Record, progress func(model.ReplayEvent)) model.ReplaySummary {
	h, u := r.s.h, r.s.u
	refuse := func(why string) model.ReplaySummary {
		h.log.Warn("replay refused", "who", u.Name, "role", string(u.Access), "key", u.Key, "tab", t.Config.Name, "rows", len(recs), "why", why)
		sum := model.ReplaySummary{Counts: map[model.RowState]int{}, Refused: refuseAll(recs, why)}
		sum.Counts[model.StateRefused] = len(sum.Refused)
		return sum
	}
	if !u.Access.CanReplay() {
		return refuse(r.refusal(t.Config.Name))
	}
	// The plan is the watchers' row list. Plan does no I/O, and the runner has not started:
	// nothing writes to recs meanwhile.
	plan := h.replayer.Plan(t, recs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The rows start empty (not queued from the plan): a late watcher is sent only the rows
	// that moved, as its own view starts from the plan.
	run := &tabRun{s: r.s, who: u.Name, tab: t.Config.Name, prog: model.RunProgress{Total: len(plan.Calls)}, started: time.Now(), plan: plan,
		cancel: cancel, watchers: map[*runWatch]struct{}{}, ended: make(chan struct{})}
	key := tabKey(t.Config.Name)
	h.mu.Lock()
	if other := h.runs[key]; other != nil {
		why := other.busy()
		h.mu.Unlock()
		return refuse(why)
	}
	h.runSeq++
	run.id = h.runSeq
	h.runs[key] = run
	h.notifyRuns()
	h.mu.Unlock()
	h.log.Info("replay started", "who", u.Name, "tab", t.Config.Name, "rows", len(recs))
	// The starter's own cancel (x in their TUI) cancels ctx directly: record it as theirs the
	// moment it happens, so a watcher confirming a cancel meanwhile isn't credited with it.
	stop := context.AfterFunc(ctx, func() {
		h.mu.Lock()
		if run.cancelledBy == "" {
			run.cancelledBy = u.Name
			h.notifyRuns()
		}
		h.mu.Unlock()
	})
	defer stop()
	sum := h.replayer.Replay(model.WithActor(ctx, u.Name), t, recs, func(ev model.ReplayEvent) {
		h.mu.Lock()
		run.progress(ev)
		h.notifyRuns()
		h.mu.Unlock()
		if progress != nil {
			progress(ev)
		}
	})
	// The report reaches every watcher before the reload after the run: they see it at once.
	h.mu.Lock()
	if sum.Cancelled && run.cancelledBy == "" {
		run.cancelledBy = u.Name // the starter's own cancel
	}
	run.sum = sum
	close(run.ended)
	delete(h.runs, key)
	h.notifyRuns()
	cancelledBy := run.cancelledBy
	h.mu.Unlock()
	h.log.Info("replay ended", "who", u.Name, "tab", t.Config.Name, "counts", fmt.Sprint(sum.Counts), "halted", sum.Halted != nil,
		"cancelled", sum.Cancelled, "cancelled_by", cancelledBy)
	for _, row := range sum.Rows {
		h.log.Info("replayed", "who", u.Name, "tab", t.Config.Name, "id", row.ID, "row", row.Row, "state", string(row.State), "detail", row.Detail)
	}
	h.wrote()
	h.load(h.ctx, 0)
	return sum
}

// progress records one event of the run and hands it to every watcher (never waiting for
// one). Called with h.mu held.
func (r *tabRun) progress(ev model.ReplayEvent) {
	r.prog.Apply(ev)
	for w := range r.watchers {
		w.add(ev.Row)
	}
}

// Runs are the replays in progress, this session's own marked Mine.
func (r *sessionReplayer) Runs() []tui.RunInfo {
	h := r.s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]tui.RunInfo, 0, len(h.runs))
	for _, run := range h.runs {
		out = append(out, run.info(r.s))
	}
	slices.SortFunc(out, func(a, b tui.RunInfo) int { return strings.Compare(a.Tab, b.Tab) })
	return out
}

// RunsChanged receives a notice whenever a run starts, moves, is cancelled or ends.
func (r *sessionReplayer) RunsChanged() <-chan struct{} { return r.s.runs }

// Watch opens the live progress of the run in progress on tab, seeded with every row's state
// so far.
func (r *sessionReplayer) Watch(tab string) (tui.RunWatch, bool) {
	h := r.s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	run := h.runs[tabKey(tab)]
	if run == nil {
		return nil, false
	}
	w := &runWatch{s: r.s, run: run, pending: map[string]model.RowResult{}, notify: make(chan struct{}, 1), closed: make(chan struct{}),
		elapsed: time.Since(run.started)}
	for _, row := range run.prog.Rows {
		w.add(row)
	}
	w.add(model.RowResult{}) // the counts so far
	run.watchers[w] = struct{}{}
	h.log.Info("replay watched", "who", r.s.u.Name, "whose", run.who, "tab", run.tab)
	return w, true
}

// runWatch is one session's watch of a run: the rows that moved since its last Next (the
// newest state of each only, so it holds at most one entry per row however slowly it reads).
type runWatch struct {
	s       *session
	run     *tabRun
	elapsed time.Duration
	// guarded by the hub's mu:
	pending map[string]model.RowResult
	order   []string
	notify  chan struct{} // capacity 1: "there is something to take"
	closed  chan struct{}
	isShut  bool
}

// add records a row's new state (an empty ID: only the counts moved). Called with h.mu held.
func (w *runWatch) add(row model.RowResult) {
	if row.ID != "" {
		old, seen := w.pending[row.ID]
		if !seen {
			w.order = append(w.order, row.ID)
		}
		w.pending[row.ID] = model.MergeRow(old, row)
	}
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// Info is the run as of now.
func (w *runWatch) Info() tui.RunInfo {
	h := w.s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	return w.run.info(w.s)
}

// Plan is the run's plan (its calls are the rows).
func (w *runWatch) Plan() model.ReplayPlan { return w.run.plan }

// Elapsed is how long the run had been going when the watch opened.
func (w *runWatch) Elapsed() time.Duration { return w.elapsed }

// Next waits for progress, the run's end, the watch's close or the session's end.
func (w *runWatch) Next() ([]model.ReplayEvent, *model.ReplaySummary) {
	select {
	case <-w.notify:
	case <-w.run.ended:
	case <-w.closed:
		return nil, nil
	case <-w.s.gone:
		return nil, nil
	}
	h := w.s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	run := w.run
	events := make([]model.ReplayEvent, 0, len(w.order)+1)
	for _, id := range w.order {
		events = append(events, model.ReplayEvent{Row: w.pending[id], Done: run.prog.Done, Total: run.prog.Total})
	}
	events = append(events, model.ReplayEvent{Done: run.prog.Done, Total: run.prog.Total, Halted: run.prog.Halt})
	clear(w.pending)
	w.order = w.order[:0]
	select {
	case <-run.ended:
		sum := run.sum
		return events, &sum
	default:
		return events, nil
	}
}

// CancelRefusal is why this person may not cancel another's run: only an operator may.
func (w *runWatch) CancelRefusal() string {
	u := w.s.u
	if !u.Access.CanReplay() {
		return (&model.AccessError{Who: u.Name, Role: u.Access, Why: "only an operator can cancel another person's replay"}).Error()
	}
	return ""
}

// Cancel cancels the run's context as this person (checked again here: the TUI's check is a
// courtesy), and logs who cancelled whose run.
func (w *runWatch) Cancel() error {
	h, u, run := w.s.h, w.s.u, w.run
	if why := w.CancelRefusal(); why != "" {
		h.log.Warn("replay cancel refused", "who", u.Name, "role", string(u.Access), "key", u.Key, "whose", run.who, "tab", run.tab, "why", why)
		return errors.New(why)
	}
	h.mu.Lock()
	select {
	case <-run.ended:
		h.mu.Unlock()
		return fmt.Errorf("%s's replay of %s has already ended", run.who, run.tab)
	default:
	}
	if run.cancelledBy == "" {
		run.cancelledBy = u.Name
	}
	done, total := run.prog.Done, run.prog.Total
	h.notifyRuns()
	h.mu.Unlock()
	h.log.Info("replay cancelled", "who", u.Name, "role", string(u.Access), "key", u.Key, "whose", run.who, "tab", run.tab, "done", done, "total", total)
	run.cancel()
	return nil
}

// Close stops watching.
func (w *runWatch) Close() {
	h := w.s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !w.isShut {
		w.isShut = true
		close(w.closed)
		delete(w.run.watchers, w)
	}
}
