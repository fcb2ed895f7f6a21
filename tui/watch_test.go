package tui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

// sharedReplayer is a Replayer with other people's runs (SharedRuns): the replay side is
// fakeReplayer, the runs and the watch are the test's (a stream of model events, not a store).
type sharedReplayer struct {
	*fakeReplayer
	runs    []RunInfo
	changed chan struct{}
	w       *fakeWatch
}

func (s *sharedReplayer) Runs() []RunInfo              { return s.runs }
func (s *sharedReplayer) RunsChanged() <-chan struct{} { return s.changed }
func (s *sharedReplayer) Watch(tab string) (RunWatch, bool) {
	if s.w == nil || !strings.EqualFold(s.w.info.Tab, tab) {
		return nil, false
	}
	return s.w, true
}

// fakeWatch is a watched run whose events the test sends as messages.
type fakeWatch struct {
	mu        sync.Mutex
	info      RunInfo
	plan      model.ReplayPlan
	refusal   string
	cancelled string
	closed    bool
}

func (w *fakeWatch) Info() RunInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.info
}
func (w *fakeWatch) Plan() model.ReplayPlan { return w.plan }
func (w *fakeWatch) Elapsed() time.Duration { return 12 * time.Second }
func (w *fakeWatch) Next() ([]model.ReplayEvent, *model.ReplaySummary) {
	select {} // the tests hand the events to Update themselves
}
func (w *fakeWatch) CancelRefusal() string { return w.refusal }
func (w *fakeWatch) Cancel() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancelled = "yes"
	return nil
}
func (w *fakeWatch) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

var aliceRun = RunInfo{ID: 1, Who: "alice", Tab: "failed_calls", Done: 0, Total: 3}

// newWatchModel is a session at w x h told that alice replays failed_calls (three calls).
func newWatchModel(t *testing.T, w, h int, opts ...modelOpt) (*Model, *sharedReplayer) {
	t.Helper()
	plan := model.ReplayPlan{Sources: []string{"crm"}}
	for i := 1; i <= 3; i++ {
		plan.Calls = append(plan.Calls, model.PlannedCall{ID: "k-" + itoa(i), Row: 1 + i, URL: "https://crm.example/api/leads", Source: "crm"})
	}
	sr := &sharedReplayer{fakeReplayer: newFakeReplayer(), runs: []RunInfo{aliceRun}, changed: make(chan struct{}, 1),
		w: &fakeWatch{info: aliceRun, plan: plan}}
	m, _ := newReplayModel(t, sr.fakeReplayer, w, h, append([]modelOpt{func(o *Options) { o.Replayer = sr }}, opts...)...)
	send(m, runsMsg{runs: sr.runs, ok: true})
	return m, sr
}

// openWatch is P: the Watch runs in the Cmd it returns, whose message opens the view.
func openWatch(t *testing.T, m *Model) {
	t.Helper()
	cmd := send(m, press("P"))
	if cmd == nil {
		t.Fatal("P opened nothing")
	}
	msg, ok := cmd().(watchOpenedMsg)
	if !ok || !msg.ok {
		t.Fatalf("P's Cmd gave %#v", msg)
	}
	send(m, msg)
}

// progressTo moves the watched run: k-1 delivered, k-2 sending.
func progressTo(m *Model) {
	send(m, watchEventsMsg{seq: m.watch.seq, events: []model.ReplayEvent{
		{Row: model.RowResult{ID: "k-1", State: model.StateDelivered, Detail: "200 from crm", Attempts: 1}, Done: 1, Total: 3},
		{Row: model.RowResult{ID: "k-2", State: model.StateSending, Attempts: 1}, Done: 1, Total: 3},
	}})
}

func TestWatchToldOfAnotherPersonsRun(t *testing.T) {
	m, sr := newWatchModel(t, 120, 30)
	if got := toastTexts(m); !strings.Contains(got, "alice started replaying failed_calls (P shows it)") {
		t.Errorf("no start toast: %q", got)
	}
	if out := plainScreen(m); !strings.Contains(out, "alice is replaying 0/3 · P shows it") {
		t.Errorf("the footer doesn't tell of alice's run:\n%s", out)
	}
	send(m, runsMsg{runs: sr.runs, ok: true})
	if n := strings.Count(toastTexts(m), "alice started"); n != 1 {
		t.Errorf("the same run was announced %d times", n)
	}
	keys(m, "2", "R")
	if m.dialog != nil || len(sr.planned) != 0 {
		t.Errorf("R during alice's run planned or asked: dialog %v, plans %v", m.dialog != nil, sr.planned)
	}
	if got := toastTexts(m); !strings.Contains(got, "alice is replaying failed_calls 0/3 · P shows it; try again when it ends") {
		t.Errorf("the refusal doesn't say how to watch: %q", got)
	}
	send(m, runsMsg{ok: true}) // the run ended
	if out := plainScreen(m); strings.Contains(out, "alice is replaying 0/3") {
		t.Errorf("the footer still tells of an ended run:\n%s", out)
	}
}

func TestWatchShowsProgressAndReport(t *testing.T) {
	m, sr := newWatchModel(t, 100, 30, func(o *Options) { o.NoColor = true })
	openWatch(t, m)
	out := plainScreen(m)
	for _, want := range []string{"alice's replay of failed_calls · Replaying 3 calls to crm", "0/3 0%", "3 queued", "elapsed 12s"} {
		if !strings.Contains(out, want) {
			t.Errorf("the watch view lacks %q:\n%s", want, out)
		}
	}
	progressTo(m)
	out = plainScreen(m)
	for _, want := range []string{"1/3 33%", "1 delivered · 1 sending · 1 queued", "200 from crm"} {
		if !strings.Contains(out, want) {
			t.Errorf("after progress the view lacks %q:\n%s", want, out)
		}
	}
	sum := model.ReplaySummary{Cancelled: true, Counts: map[model.RowState]int{model.StateDelivered: 2},
		Rows:         []model.RowResult{{ID: "k-1", State: model.StateDelivered}, {ID: "k-2", State: model.StateDelivered}},
		NotAttempted: []string{"k-3"}}
	send(m, watchEventsMsg{seq: m.watch.seq, sum: &sum, cancelledBy: "bob"})
	out = plainScreen(m)
	for _, want := range []string{"alice's replay of failed_calls · Replay cancelled by bob · 2/3 calls", "Cancelled by bob: rows not sent stay as they were.", "Not attempted (1): k-3"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if !sr.w.closed {
		t.Error("the watch wasn't closed at the run's end")
	}
	keys(m, "esc")
	if m.watch.watching() || m.replay.running() {
		t.Error("esc leaves the report")
	}
	keys(m, "P") // the report again (nobody replays now)
	if !m.watch.watching() {
		t.Error("P doesn't show the watched report again")
	}
}

func TestWatchCancelIsAnOperatorsAfterAConfirm(t *testing.T) {
	m, sr := newWatchModel(t, 120, 30)
	sr.w.refusal = "carol is a triager: cancelling another person's replay is an operator's"
	openWatch(t, m)
	keys(m, "x")
	if m.dialog != nil || !strings.Contains(toastTexts(m), sr.w.refusal) {
		t.Errorf("a triager's cancel: dialog %v, toasts %q", m.dialog != nil, toastTexts(m))
	}

	m, sr = newWatchModel(t, 120, 30)
	openWatch(t, m)
	progressTo(m)
	keys(m, "x")
	d, ok := m.dialog.(confirm)
	if !ok || !strings.Contains(d.View(), "Cancel alice's replay of failed_calls (1/3)?") {
		t.Fatalf("no confirm naming alice: %v", m.dialog)
	}
	keys(m, "enter") // default No
	if m.dialog != nil || sr.w.cancelled != "" {
		t.Fatalf("enter cancelled (the default is No)")
	}
	keys(m, "x")
	cmd := send(m, press("y"))
	for _, msg := range cmdMsgs(t, cmd) {
		send(m, msg)
	}
	if sr.w.cancelled == "" {
		t.Error("y didn't cancel through the watch")
	}
	if !strings.Contains(plainScreen(m), "Cancelling… 1/3") && !strings.Contains(plainScreen(m), "Cancelling") {
		t.Errorf("the view doesn't say it is cancelling:\n%s", plainScreen(m))
	}
}

// TestGoldenMatrixWatch: another person's run, watched, mid-way.
func TestGoldenMatrixWatch(t *testing.T) {
	goldenMatrix(t, "watch", replayWorkbook, func(t *testing.T, m *Model) {
		send(m, runsMsg{runs: []RunInfo{aliceRun}, ok: true})
		openWatch(t, m)
		progressTo(m)
	}, func(o *Options) {
		plan := model.ReplayPlan{Sources: []string{"crm"}}
		for i := 1; i <= 3; i++ {
			plan.Calls = append(plan.Calls, model.PlannedCall{ID: "k-" + itoa(i), Row: 1 + i, URL: "https://crm.example/api/leads", Source: "crm"})
		}
		o.Replayer = &sharedReplayer{fakeReplayer: newFakeReplayer(), runs: []RunInfo{aliceRun}, changed: make(chan struct{}, 1),
			w: &fakeWatch{info: aliceRun, plan: plan}}
	})
}

// "alice started replaying failed_calls (P shows it)" is news until the run is watched or
// has ended: P, or the end of the run, takes it off the screen.
func TestWatchStartToastGoesWhenWatched(t *testing.T) {
	m, _ := newWatchModel(t, 100, 30)
	if !strings.Contains(plainScreen(m), "alice started replaying failed_calls") {
		t.Fatal("no start toast")
	}
	openWatch(t, m)
	if got := toastTexts(m); strings.Contains(got, "alice started replaying") {
		t.Errorf("watching alice's run, the toast still says %q", got)
	}

	m, _ = newWatchModel(t, 100, 30)
	send(m, runsMsg{ok: true}) // the run ended before anyone looked
	if got := toastTexts(m); strings.Contains(got, "alice started replaying") {
		t.Errorf("after the run ended, the toast still says %q", got)
	}
}
