package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// toastTexts is every toast currently held (shown or queued behind an error).
func toastTexts(m *Model) string {
	var out []string
	for _, t := range m.toasts.items {
		out = append(out, t.text)
	}
	return strings.Join(out, "\n")
}

// A detail view left open on a record a refresh removed must not act on another row: the ID
// lookup misses, and index 0 is somebody else.
func TestDetailOnVanishedRecordActsOnNothing(t *testing.T) {
	t.Run("clear error", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "3", "j", "j", "enter") // job-3, the error job
		if m.detail == nil || m.detail.rec.ID != "job-3" {
			t.Fatalf("detail on %v, want job-3", m.detail)
		}
		// A refresh: job-3 is gone, and job-1 (record 0) is now an error job too.
		wb := testWorkbook(t)
		rows := queueRows()
		rows = append(rows[:3], rows[4:]...)
		rows[1][3] = "error"
		wb.Tabs[2] = mustDecode(t, model.RoleQueue, rows)
		send(m, loaded(m, wb))
		if !strings.Contains(plainScreen(m), "no longer in the sheet") {
			t.Errorf("the detail says its record is gone:\n%s", plainScreen(m))
		}
		keys(m, "e")
		if m.writing || m.dialog != nil {
			t.Fatalf("e wrote to another row: %+v", m.inflight)
		}
		if !strings.Contains(plainScreen(m), goneNote) {
			t.Errorf("e says the row is gone:\n%s", plainScreen(m))
		}
	})
	t.Run("discard", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "2", "enter") // k-2, the newest
		wb := testWorkbook(t)
		rows := deadRows()
		wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, append(rows[:2], rows[3:]...)) // without k-2
		send(m, loaded(m, wb))
		keys(m, "D")
		if m.writing || m.dialog != nil {
			t.Fatalf("D discarded another row: %+v", m.inflight)
		}
		if !strings.Contains(plainScreen(m), goneNote) {
			t.Errorf("D says the row is gone:\n%s", plainScreen(m))
		}
		keys(m, "s")
		if m.dialog != nil {
			t.Errorf("s opened a picker for a row that is gone")
		}
	})
	t.Run("empty table", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "2", "enter")
		wb := testWorkbook(t)
		wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, deadRows()[:1]) // the header only
		send(m, loaded(m, wb))
		for _, k := range []string{"D", "e", "s"} {
			keys(m, k) // must not panic (index 0 of no records)
			if m.writing || m.dialog != nil {
				t.Fatalf("%s acted on an empty tab", k)
			}
		}
	})
}

func TestQuitWaitsForTheWriteInFlight(t *testing.T) {
	write := func(t *testing.T) *Model {
		m := newLoaded(t, testWorkbook(t), 80, 24)
		keys(m, "s", "4") // one row: the write starts at once
		if !m.writing {
			t.Fatal("no write in flight")
		}
		return m
	}
	applied := func(m *Model) appliedMsg {
		op := *m.inflight
		return appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0]}}}}
	}

	m := write(t)
	if cmd := send(m, press("q")); isQuit(t, cmd) {
		t.Fatal("q with a write in flight quit at once, dropping its result")
	}
	if out := plainScreen(m); !strings.Contains(out, "finishing the write") || !strings.Contains(out, "then quitting") {
		t.Errorf("q says it waits for the write:\n%s", out)
	}
	if cmd := send(m, press("q")); isQuit(t, cmd) {
		t.Error("a second q still waits (ctrl+c is the way out now)")
	}
	if cmd := send(m, applied(m)); !isQuit(t, cmd) {
		t.Error("the app quits once the write has landed")
	}

	// A second ctrl+c quits at once.
	m = write(t)
	if cmd := send(m, press("ctrl+c")); isQuit(t, cmd) {
		t.Fatal("the first ctrl+c waits for the write")
	}
	if cmd := send(m, press("ctrl+c")); !isQuit(t, cmd) {
		t.Error("the second ctrl+c quits at once")
	}

	// A write that doesn't land is shown, and the app stays.
	m = write(t)
	send(m, press("q"))
	if cmd := send(m, appliedMsg{op: *m.inflight, err: errors.New("boom")}); isQuit(t, cmd) {
		t.Fatal("a failed write must be shown, not quit over")
	}
	if out := plainScreen(m); !strings.Contains(out, "not quitting") || !strings.Contains(out, "write failed: boom") {
		t.Errorf("the failure is shown:\n%s", out)
	}
	if cmd := send(m, press("q")); !isQuit(t, cmd) {
		t.Error("q quits once nothing is in flight")
	}
}

func TestStatusCountsNeedingAttentionComeFirst(t *testing.T) {
	wb := testWorkbook(t)
	dead := prepare(wb.Tabs[1])
	if got := statusCountsLine(dead.table, dead.counts, 0, 0); got != "1 rejected · 2 dead · 1 delivered" {
		t.Errorf("dead letters: %q", got)
	}
	queue := prepare(wb.Tabs[2])
	if got := statusCountsLine(queue.table, queue.counts, 0, 1); got != "1 stale · 1 error · 1 pending · 1 claimed · 1 done" {
		t.Errorf("queue: %q", got)
	}
	inbox := prepare(wb.Tabs[0])
	if got := statusCountsLine(inbox.table, inbox.counts, 2, 0); got != "10 new · 5 read" {
		t.Errorf("inbox: %q", got)
	}
	// At 80 columns the other tabs keep one count: the sticky error, not the waiting rows.
	m := newLoaded(t, wb, 80, 24)
	if out := plainScreen(m); !strings.Contains(out, "2 failed_calls 1 rejected") {
		t.Errorf("the tab bar names the rejected dead letter first:\n%s", out)
	}
	keys(m, "3")
	if out := plainScreen(m); !strings.Contains(out, "3 Jobs 1 stale · 1 error") {
		t.Errorf("the queue's stale claims and errors come first:\n%s", out)
	}
}

func TestReplayToastCountsSkippedApart(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y")
	if m.run == nil {
		t.Fatal("no run")
	}
	send(m, replayDoneMsg{id: m.run.id, report: ReplayReport{
		Counts: map[string]int{"delivered": 1, "refused": 3},
		Refused: []RefusedRow{
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
	if got := reportCounts(ReplayReport{Counts: map[string]int{"refused": 2}, Refused: []RefusedRow{{Skipped: true}, {Skipped: true}}}); got != "nothing sent; 2 skipped by rule" {
		t.Errorf("only skipped rows: %q", got)
	}
}

func TestEscDuringReplayGoesBackAndTheRunGoesOn(t *testing.T) {
	fr := newFakeReplayer()
	fr.events = []ReplayProgress{{ID: "k-1", State: "retryable", Attempts: 3, Done: 1, Total: 2}}
	fr.report = ReplayReport{Counts: map[string]int{"retryable": 1, "not-attempted": 1}}
	m, st := newReplayModel(t, fr, 100, 30)
	p := newPump(t, m)
	p.keys("2", "space", "space", "R", "y")
	fr.waitStarted(t)
	p.until("the first row's outcome", func() bool { return m.run.states["retryable"] == 1 })

	p.keys("esc")
	if m.showRun || !m.running() || fr.ctx.Err() != nil {
		t.Fatalf("esc goes back to the table and the run goes on: showRun %v running %v ctx %v", m.showRun, m.running(), fr.ctx.Err())
	}
	out := plainScreen(m)
	for _, want := range []string{"replaying 1/2 · 1 retryable · x cancels · P shows it", "P replay progress", "x cancel replay"} {
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
	if m.loading || st.loadCount() != loads {
		t.Error("r during a run must not load")
	}
	p.keys("P")
	if !m.showRun {
		t.Fatal("P shows the progress view again")
	}
	p.keys("q")
	if m.showRun || !m.running() || m.dialog != nil {
		t.Fatalf("q in the progress view goes back too: showRun %v dialog %T", m.showRun, m.dialog)
	}
	p.keys("enter", "esc") // a detail view, and back
	p.keys("x")
	if !m.run.cancelling || fr.ctx.Err() == nil {
		t.Fatal("x cancels the run from the table")
	}
	p.until("the run to end", func() bool { return m.run.finished })
	p.keys("P")
	if !m.showRun || !strings.Contains(plainScreen(m), "Replay cancelled") {
		t.Errorf("P shows the finished run's report:\n%s", plainScreen(m))
	}
}

func TestReplayFromTheDetailView(t *testing.T) {
	fr := newFakeReplayer()
	m, _ := newReplayModel(t, fr, 100, 30)
	keys(m, "2", "space", "enter") // k-1 marked; the detail shows k-2
	if m.detail == nil || m.detail.rec.ID != "k-2" {
		t.Fatalf("detail on %+v", m.detail)
	}
	keys(m, "R")
	if _, ok := m.dialog.(confirm); !ok {
		t.Fatalf("R in the detail view asks first, got %T:\n%s", m.dialog, plainScreen(m))
	}
	if len(fr.planned) != 1 || !slices.Equal(fr.planned[0], []string{"k-2"}) {
		t.Errorf("R plans the record shown, not the marks: %v", fr.planned)
	}
	if !strings.Contains(plainScreen(m), "Replay 1 call to 1 source (crm)?") {
		t.Errorf("the same confirm as in the table:\n%s", plainScreen(m))
	}
	keys(m, "y")
	if !m.running() {
		t.Error("y starts the run")
	}

	// Without a Replayer, the hint names the record shown.
	m = newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "2", "j", "j", "enter", "R")
	if !strings.Contains(plainScreen(m), "run: triage replay --tab failed_calls k-3") {
		t.Errorf("R in the detail view names the command for its record:\n%s", plainScreen(m))
	}
}

func TestNoIDNoteForDeadLettersNamesTheKey(t *testing.T) {
	rows := deadRows()
	dup := append([]string(nil), "2025-05-28T09:00:00Z", "crm", "https://crm.example/api/leads", `{}`, "503", "1", "POST", "k-1", "dead", "")
	rows = append(rows, rowsOf(dup)...)
	wb := testWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rows)
	m := newLoaded(t, wb, 100, 30)
	keys(m, "2", "*", "D")
	got := toastTexts(m)
	if !strings.Contains(got, "skipped") || !strings.Contains(got, "key cell") {
		t.Errorf("a dead letter without identity is about its key:\n%s", got)
	}
	if strings.Contains(got, "fill its ID cell") {
		t.Errorf("dead letters have no ID cell to fill:\n%s", got)
	}
	// Without a problem to quote, the key itself is named.
	tab := wb.Tabs[1]
	r := tab.Records[len(tab.Records)-1]
	r.Problems = nil
	if got := noIDReason(tab, &r); got != "its key k-1 is shared with another row: change one of the key cells in the sheet so each row has its own key" {
		t.Errorf("noIDReason: %q", got)
	}
	// The inbox quotes the row's problem.
	var x noIDInfo
	x.add(wb.Tabs[0], &model.Record{Row: 7, Problems: []string{"no ID: this row can't be changed from triage until its ID cell is filled"}})
	x.add(wb.Tabs[0], &model.Record{Row: 9})
	if got := x.note(); got != "2 rows skipped (first: row 7): no ID: this row can't be changed from triage until its ID cell is filled" {
		t.Errorf("inbox note: %q", got)
	}
}

func TestKeyMapConflicts(t *testing.T) {
	if c := DefaultKeyMap().Conflicts(); c != nil {
		t.Fatalf("the default keys conflict: %v", c)
	}
	if err := DefaultKeyMap().Validate(); err != nil {
		t.Fatal(err)
	}
	km := DefaultKeyMap()
	if err := km.Rebind("replay", []string{"r"}); err != nil {
		t.Fatal(err)
	}
	if got := km.Conflicts(); !slices.Equal(got, []string{`key "r" is bound to both replay and refresh`}) {
		t.Errorf("Conflicts() = %q", got)
	}
	if err := km.Validate(); err == nil || !strings.Contains(err.Error(), `key "r" is bound to both replay and refresh`) {
		t.Errorf("Validate() = %v", err)
	}
	km = DefaultKeyMap()
	_ = km.Rebind("undo", []string{"u", "y"})
	_ = km.Rebind("discard", []string{"y"})
	_ = km.Rebind("refresh", []string{"ctrl+c", "f5"})
	_ = km.Rebind("cancel", []string{"x", "ctrl+c"}) // cancelling is what ctrl+c does during a run
	want := []string{
		`key "ctrl+c" is reserved (it always quits, or cancels a running replay): it can't be bound to refresh`,
		`key "y" is bound to discard, undo and copy`,
	}
	if got := km.Conflicts(); !slices.Equal(got, want) {
		t.Errorf("Conflicts() =\n%q\nwant\n%q", got, want)
	}
	// An unbound action conflicts with nothing.
	km = DefaultKeyMap()
	_ = km.Rebind("refresh", nil)
	_ = km.Rebind("replay", []string{"r"})
	if c := km.Conflicts(); c != nil {
		t.Errorf("refresh is unbound, r is free: %v", c)
	}
}

// The hints name the keys as bound, not the defaults.
func TestHintsFollowTheKeyMap(t *testing.T) {
	km := DefaultKeyMap()
	for action, keys := range map[string][]string{"clear": {"backspace"}, "quit": {"ctrl+q"}, "down": {"ctrl+n"}, "up": {"ctrl+p"}} {
		if err := km.Rebind(action, keys); err != nil {
			t.Fatal(err)
		}
	}
	if c := km.Conflicts(); c != nil {
		t.Fatal(c)
	}
	m := newLoaded(t, testWorkbook(t), 160, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "enter")
	if out := plainScreen(m); !strings.Contains(out, "esc/backspace/ctrl+q back") || !strings.Contains(out, "ctrl+n next field") {
		t.Errorf("the detail's hints follow the keys:\n%s", out)
	}
	send(m, tea.KeyPressMsg{Code: 'q', Mod: tea.ModCtrl})
	if m.detail != nil {
		t.Error("ctrl+q (quit) goes back from the detail")
	}
	keys(m, "?")
	if out := plainScreen(m); !strings.Contains(out, "esc/backspace/? close help") || !strings.Contains(out, "ctrl+n/ctrl+p scroll") {
		t.Errorf("the help's hints follow the keys:\n%s", out)
	}
}
