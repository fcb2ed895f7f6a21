package tui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/triage-dev/triage/model"
)

func TestReplayToastCountsSkippedApart(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y")
	if m.replay.run == nil {
		t.Fatal("no run")
	}
	send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{
		Counts: map[model.RowState]int{model.StateDelivered: 1, model.StateRefused: 1, model.StateSkipped: 2},
		Refused: []model.Refusal{
			{ID: "r-1", Reason: "row 9 is rejected", Skipped: true},
			{ID: "d-1", Reason: "row 10 is delivered", Skipped: true},
			{ID: "m-1", Reason: "row 8: source mailer has no url_prefixes"},
		},
	}})
	got := toastTexts(m)
	if !strings.Contains(got, "replay finished: 1 delivered · 1 refused · 2 skipped by rule") {
		t.Errorf("skipped rows are not refused:\n%s", got)
	}
	if strings.Contains(got, "3 refused") {
		t.Errorf("the toast counts skipped rows as refused:\n%s", got)
	}
	if got := reportCounts(model.ReplaySummary{Counts: map[model.RowState]int{model.StateSkipped: 2}, Refused: []model.Refusal{{Skipped: true}, {Skipped: true}}}); got != "nothing sent; 2 skipped by rule" {
		t.Errorf("only skipped rows: %q", got)
	}
	// Rows another live run holds are skipped, but not by rule: the toast says so.
	held := model.ReplaySummary{Counts: map[model.RowState]int{model.StateSkipped: 3},
		Refused: []model.Refusal{{ID: "a", Skipped: true}, {ID: "b", Skipped: true}, {ID: "c", Skipped: true}},
		Held:    []model.HeldGroup{{Holder: model.LeaseHolder{By: "cron@jump1"}, IDs: []string{"a", "b"}}}}
	if got := reportCounts(held); got != "nothing sent; 2 being replayed by another run · 1 skipped by rule" {
		t.Errorf("held rows: %q", got)
	}
}

func TestEscDuringReplayGoesBackAndTheRunGoesOn(t *testing.T) {
	fr := newFakeReplayer()
	fr.events = []model.ReplayEvent{{Row: model.RowResult{ID: "k-1", State: "retryable", Attempts: 3}, Done: 1, Total: 2}}
	fr.report = model.ReplaySummary{Counts: map[model.RowState]int{"retryable": 1, "not-attempted": 1}}
	m, st := newReplayModel(t, fr, 100, 30)
	p := newPump(t, m)
	p.keys("2", "space", "space", "R", "y")
	fr.waitStarted(t)
	p.until("the first row's outcome", func() bool { return m.replay.run.prog.Counts["retryable"] == 1 })

	p.keys("esc")
	if m.replay.showRun || !m.replay.running() || fr.ctx.Err() != nil {
		t.Fatalf("esc goes back to the table and the run goes on: showRun %v running %v ctx %v", m.replay.showRun, m.replay.running(), fr.ctx.Err())
	}
	out := plainScreen(m)
	for _, want := range []string{"replaying 1/2 calls · 1 retryable · x cancels · P shows it", "P replay progress", "x cancel replay"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table keeps %q while the run goes on:\n%s", want, out)
		}
	}
	// Writes and refreshes stay blocked.
	loads := st.loadCount()
	p.keys("s")
	if m.dialog != nil || !strings.Contains(plainScreen(m), "a replay is running") {
		t.Errorf("s during a run is refused:\n%s", plainScreen(m))
	}
	p.keys("r")
	if m.load.loading || st.loadCount() != loads {
		t.Error("r during a run must not load")
	}
	p.keys("P")
	if !m.replay.showRun {
		t.Fatal("P shows the progress view again")
	}
	p.keys("q")
	if m.replay.showRun || !m.replay.running() || m.dialog != nil {
		t.Fatalf("q in the progress view goes back too: showRun %v dialog %T", m.replay.showRun, m.dialog)
	}
	p.keys("enter", "esc") // a detail view, and back
	p.keys("x")
	if !m.replay.run.cancelling || fr.ctx.Err() == nil {
		t.Fatal("x cancels the run from the table")
	}
	p.until("the run to end", func() bool { return m.replay.run.finished })
	p.keys("P")
	if !m.replay.showRun || !strings.Contains(plainScreen(m), "Replay cancelled") {
		t.Errorf("P shows the finished run's report:\n%s", plainScreen(m))
	}
}

func TestReplayRunProgressCancelAndReload(t *testing.T) {
	fr := newFakeReplayer()
	fr.events = []model.ReplayEvent{
		{Row: model.RowResult{ID: "k-1", State: "sending"}, Total: 3},
		{Row: model.RowResult{ID: "k-1", State: "delivered", Attempts: 1, Detail: "200"}, Done: 1, Total: 3},
		{Row: model.RowResult{ID: "k-2", State: "sending"}, Done: 1, Total: 3},
	}
	fr.report = model.ReplaySummary{Counts: map[model.RowState]int{"delivered": 1, "not-attempted": 2}, NotAttempted: []string{"k-2", "k-3"},
		Rows: []model.RowResult{{ID: "k-1", State: "delivered", Attempts: 1}, {ID: "k-2", State: "not-attempted"}, {ID: "k-3", State: "not-attempted"}}}
	m, st := newReplayModel(t, fr, 100, 30)
	p := newPump(t, m)
	p.keys("2", "space", "space", "space", "k") // mark k-1, k-2, k-3; the cursor on k-3 must survive the reload
	p.keys("R", "y")
	if !m.replay.running() || !m.replay.showRun {
		t.Fatalf("y starts the run: running %v", m.replay.running())
	}
	fr.waitStarted(t)
	// The run reads a snapshot: its records are copies, not the table's.
	table := m.tabs.current().data.table
	for _, r := range fr.recs {
		for j := range table.Records {
			if r == &table.Records[j] {
				t.Fatalf("Replay got the table's own record %s", r.ID)
			}
		}
	}
	p.until("the progress of k-1 and k-2", func() bool {
		return m.replay.run.prog.Counts["delivered"] == 1 && m.replay.run.prog.Counts["sending"] == 1
	})
	out := plainScreen(m)
	for _, want := range []string{"Replaying 3 calls to crm", "1/3 33%", "1 delivered · 1 sending · 1 queued", "elapsed 0s"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress view lacks %q:\n%s", want, out)
		}
	}

	// No second replay, no refresh, no write while it runs.
	p.keys("R")
	if !strings.Contains(plainScreen(m), "a replay is already running") {
		t.Errorf("R during a run is refused:\n%s", plainScreen(m))
	}
	loads := st.loadCount()
	p.keys("r")
	p.send(refreshTickMsg{})
	if m.load.loading || !strings.Contains(plainScreen(m), "the table reloads when it ends") {
		t.Errorf("no refresh during a run: loading=%v\n%s", m.load.loading, plainScreen(m))
	}

	runCancelsAndReloads(t, m, p, fr, st, loads)
}

// runCancelsAndReloads: x cancels the run; the report, the reload (loads: the count before
// it) and the marks that follow.
func runCancelsAndReloads(t *testing.T, m *Model, p *pump, fr *fakeReplayer, st *memStore, loads int) {
	// x cancels: the context is cancelled, the view says so, the run ends with the report.
	p.keys("x")
	if !m.replay.run.cancelling || !strings.Contains(plainScreen(m), "Cancelling…") {
		t.Errorf("x shows the cancelling state:\n%s", plainScreen(m))
	}
	p.until("the run to end", func() bool { return m.replay.run.finished })
	if fr.ctx.Err() == nil {
		t.Error("cancel must cancel the Replayer's context")
	}
	out := plainScreen(m)
	for _, want := range []string{"Replay cancelled", "Not attempted (2): k-2, k-3", "Cancelled: rows not sent stay as they were."} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	p.until("the reload", func() bool { return st.loadCount() > loads && !m.load.loading })
	p.keys("esc")
	if m.replay.showRun {
		t.Error("esc closes the finished run's view")
	}
	if got := cursorID(m); got != "k-3" {
		t.Errorf("after the reload the cursor is on %q, want k-3 (kept by ID)", got)
	}
	ts := m.tabs.current()
	if ts.marked[ts.data.byID["k-1"]] || !ts.marked[ts.data.byID["k-2"]] {
		t.Error("the delivered row drops its mark; rows not attempted keep theirs for a retry")
	}
	if len(fr.recs) != 3 {
		t.Errorf("Replay got %d records, want the 3 marked", len(fr.recs))
	}
}

func TestQuitDuringReplay(t *testing.T) {
	fr := newFakeReplayer()
	fr.report = model.ReplaySummary{Counts: map[model.RowState]int{}}
	m, _ := newReplayModel(t, fr, 100, 30)
	p := newPump(t, m)
	p.keys("2", "R", "y")
	fr.waitStarted(t)
	// q in the progress view goes back to the table (the run goes on); q there asks.
	if cmd := send(m, press("q")); isQuit(t, cmd) || m.replay.showRun || !m.replay.running() {
		t.Fatalf("q in the progress view goes back to the table: showRun %v running %v", m.replay.showRun, m.replay.running())
	}
	cmd := send(m, press("q"))
	if isQuit(t, cmd) {
		t.Fatal("q during a run must not quit at once")
	}
	if _, ok := m.dialog.(confirm); !ok || !strings.Contains(plainScreen(m), "A replay is running (0/1 call done). Cancel it and quit?") {
		t.Fatalf("q during a run asks first:\n%s", plainScreen(m))
	}
	p.keys("n")
	if m.dialog != nil || !m.replay.running() || fr.ctx.Err() != nil {
		t.Fatal("n keeps the run going")
	}
	// ctrl+c cancels; a second one quits once the run has written back.
	quit := false
	p.keys("ctrl+c")
	if fr.ctx.Err() == nil || m.replay.quitAfterRun || !m.replay.run.cancelling {
		t.Fatal("the first ctrl+c during a run cancels it and stays")
	}
	if !strings.Contains(plainScreen(m), "cancelling the replay 0/1") {
		t.Errorf("the footer says it is cancelling:\n%s", plainScreen(m))
	}
	runCmds(checkedUpdate(t, m, press("ctrl+c")), p.out)
	if !m.replay.quitAfterRun {
		t.Fatal("the second ctrl+c quits after the run")
	}
	deadline := time.After(hangAfter)
	for !quit {
		select {
		case msg := <-p.out:
			if _, ok := msg.(tea.QuitMsg); ok {
				quit = true
				continue
			}
			p.send(msg)
		case <-deadline:
			t.Fatalf("no quit after the run ended:\n%s", plainScreen(m))
		}
	}
	if !m.replay.run.finished {
		t.Error("quit came before the run had ended")
	}
}

// TestRunViewReturnsActions drives the progress view on its own, without the root model:
// each key comes back as the action the root carries out, or scrolls the list.
func TestRunViewReturnsActions(t *testing.T) {
	km := DefaultKeyMap()
	k := &km
	newRun := func(finished bool) *replayRun {
		r := &replayRun{c: &common{keys: k}, finished: finished, follow: true, listH: 4}
		for i := range 10 {
			r.prog.Set(model.RowResult{ID: fmt.Sprintf("k-%d", i)})
		}
		return r
	}
	running, done := newRun(false), newRun(true)
	for _, tc := range []struct {
		name string
		r    *replayRun
		key  string
		want action
	}{
		{"help", running, "?", keyAction{v: vHelp}},
		{"x cancels a run", running, "x", cancelRunAction{}},
		{"x closes a finished run", done, "x", hideRunAction{}},
		{"esc leaves a run going on", running, "esc", hideRunAction{goesOn: true}},
		{"enter closes a finished run", done, "enter", hideRunAction{}},
		{"enter does nothing during a run", running, "enter", nil},
		{"r during a run", running, "r", toastAction{toastInfo, "a replay is running; the table reloads when it ends"}},
		{"r after a run", done, "r", keyAction{v: vRefresh}},
		{"R during a run", running, "R", toastAction{toastInfo, "a replay is already running"}},
		{"R after a run", done, "R", nil},
	} {
		if _, got := tc.r.Update(press(tc.key)); got != tc.want {
			t.Errorf("%s: %#v, want %#v", tc.name, got, tc.want)
		}
	}
	r := newRun(false)
	if _, a := r.Update(press("j")); a != nil || r.cursor != 0 || r.offset != 0 || r.follow {
		t.Errorf("the first j puts the cursor on the first row shown and stops following: action %#v cursor %d offset %d follow %v", a, r.cursor, r.offset, r.follow)
	}
	for range 4 {
		r.Update(press("j"))
	}
	if r.cursor != 4 || r.offset != 1 {
		t.Errorf("j moves the cursor and the list keeps it in view: cursor %d offset %d", r.cursor, r.offset)
	}
	r.Update(press("G"))
	if r.offset != 6 || r.cursor < 6 {
		t.Errorf("G scrolls to the last page: offset %d cursor %d", r.offset, r.cursor)
	}
	r.Update(press("g"))
	if r.offset != 0 {
		t.Errorf("g scrolls to the top: offset %d", r.offset)
	}
	// enter on the cursor row opens its whole result, the detail the list cuts included.
	r.prog.Set(model.RowResult{ID: "k-0", State: "retryable", Attempts: 3, Detail: "503 Service Unavailable: the upstream is down for maintenance until 04:00 UTC"})
	r.cursor, r.moved = 0, true
	_, a := r.Update(press("enter"))
	d, ok := a.(dialogAction)
	if !ok {
		t.Fatalf("enter on a result row: %#v", a)
	}
	r.c.width, r.c.height, r.c.bodyH = 80, 24, 20
	r.c.restyle()
	if v := ansi.Strip(d.d.View()); !strings.Contains(strings.Join(strings.Fields(v), " "), "until 04:00 UTC") || !strings.Contains(v, "3 tries") {
		t.Errorf("the result dialog lacks the whole detail:\n%s", v)
	}
}

// TestRunFinishSetsEveryRowsEndState: the report gives every row its end state (refused
// rows included, a sent row's outcome kept), the totals and the halt.
func TestRunFinishSetsEveryRowsEndState(t *testing.T) {
	r := &replayRun{cancel: func() {}}
	for _, id := range []string{"a", "b", "c", "d"} {
		r.prog.Set(model.RowResult{ID: id, State: "queued"})
	}
	r.calls = len(r.prog.Rows)
	if h := r.apply([]model.ReplayEvent{{Row: model.RowResult{ID: "a", State: "delivered"}, Done: 1, Total: 4}}); h != nil {
		t.Fatalf("no halt yet: %v", h)
	}
	halt := &model.Halt{Cause: "systemic", Source: "crm"}
	h := r.finish(model.ReplaySummary{
		Rows:         []model.RowResult{{ID: "b", State: "systemic"}},
		Refused:      []model.Refusal{{ID: "a", Reason: "changed"}, {ID: "c", Reason: "rejected", Skipped: true}},
		NotAttempted: []string{"d"},
		Halted:       halt,
	}, testNow)
	if h == nil || *h != *halt || r.prog.Halt == nil || !r.finished {
		t.Fatalf("finish returns the halt and ends the run: %v finished %v", h, r.finished)
	}
	got := map[string]model.RowState{}
	for _, row := range r.prog.Rows {
		got[row.ID] = row.State
	}
	want := map[string]model.RowState{"a": model.StateDelivered, "b": model.StateSystemic, "c": model.StateSkipped, "d": model.StateNotAttempted}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	if r.prog.Done != 3 || r.prog.Total != 4 {
		t.Errorf("done %d/%d, want 3/4 (not attempted isn't done)", r.prog.Done, r.prog.Total)
	}
}

// The quit dialog's count follows the run while it is open (it was frozen at "5/11" while
// the header said 8/11).
func TestQuitDialogCountIsLive(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y", "esc", "q")
	if !strings.Contains(plainScreen(m), "A replay is running (0/") {
		t.Fatalf("q during a run asks:\n%s", plainScreen(m))
	}
	send(m, replayProgressMsg{id: m.replay.run.id, events: []model.ReplayEvent{{Row: model.RowResult{ID: "k-1", State: model.StateDelivered}, Done: 1}}})
	if !strings.Contains(plainScreen(m), "A replay is running (1/") {
		t.Errorf("the dialog's count didn't follow the run:\n%s", plainScreen(m))
	}
}

// Quitting during a run prints the run's report once the screen is gone.
func TestQuitDuringRunLeavesItsReport(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y", "ctrl+c", "ctrl+c") // cancel, then quit when written back
	if m.ExitNote() != "" {
		t.Fatalf("nothing to say before the run ends: %q", m.ExitNote())
	}
	cmd := send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Cancelled: true,
		Counts: map[model.RowState]int{model.StateDelivered: 2}, Rows: []model.RowResult{{ID: "k-1", State: model.StateDelivered}, {ID: "k-2", State: model.StateDelivered}}}})
	if !isQuit(t, cmd) {
		t.Fatal("the run wrote back: the quit that waited for it happens")
	}
	if note := m.ExitNote(); !strings.Contains(note, "replay cancelled: 2 delivered") || !strings.Contains(note, "calls)") {
		t.Errorf("exit note %q", note)
	}
}

// The "cancelling" toast is stale once the run has ended: the end takes it down, and its own
// report toast says how it ended.
func TestRunEndTakesDownTheCancelToast(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y", "ctrl+c")
	if !strings.Contains(toastTexts(m), "cancelling") {
		t.Fatalf("toasts %q", toastTexts(m))
	}
	send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Cancelled: true}})
	if got := toastTexts(m); strings.Contains(got, "cancelling") || !strings.Contains(got, "replay cancelled") {
		t.Errorf("toasts after the run: %q", got)
	}
}
