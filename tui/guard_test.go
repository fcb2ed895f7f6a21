package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

// bigDeadWorkbook is a dead-letter tab over syncPlanMax rows, so A plans in a Cmd.
func bigDeadWorkbook(t testing.TB) *model.Workbook {
	wb := testWorkbook(t)
	rows := [][]string{{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}}
	for i := 1; i <= syncPlanMax+1; i++ {
		rows = append(rows, []string{testNow.Add(-time.Duration(i) * time.Minute).Format(time.RFC3339), "crm", "https://crm.example/api/leads",
			`{}`, "503", "1", "POST", "k-" + itoa(i), "dead", ""})
	}
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rowsOf(rows...))
	return wb
}

// While a big replay plan is computed, no write lands in the live table (the confirm would
// replay the snapshot's copy of a row just discarded) and no refresh starts.
func TestNoWriteOrRefreshWhilePlanning(t *testing.T) {
	st := &memStore{wb: func() *model.Workbook { return bigDeadWorkbook(t) }}
	m := newLoaded(t, bigDeadWorkbook(t), 100, 30, func(o *Options) { o.Store = st; o.Replayer = newFakeReplayer() })
	keys(m, "2", "A") // the planning Cmd is never run: the plan stays in progress
	if !m.replay.planning {
		t.Fatal("A over syncPlanMax rows plans in a Cmd")
	}
	for _, k := range []string{"D", "s"} {
		keys(m, k)
		if m.writes.writing || m.dialog != nil {
			t.Fatalf("%s during planning started a write or opened a dialog (writing %v, dialog %T)", k, m.writes.writing, m.dialog)
		}
		if got := toastTexts(m); !strings.Contains(got, "planning the replay…") {
			t.Errorf("%s during planning says why it is refused:\n%s", k, got)
		}
	}
	keys(m, "r")
	if m.load.loading || st.loadCount() != 0 {
		t.Errorf("r during planning must not load (loading %v, loads %d)", m.load.loading, st.loadCount())
	}
}

// Rows refused inside the run (their key write failed) and rows skipped by rule end refused
// and skipped with their reasons, not queued; the totals count them.
func TestReplayReportMarksRefusedRows(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y") // k-1..k-6 planned
	if m.replay.run == nil {
		t.Fatal("no run")
	}
	rows := []model.RowResult{}
	for _, id := range []string{"k-1", "k-2", "k-3", "k-4"} {
		rows = append(rows, model.RowResult{ID: id, State: model.StateDelivered})
	}
	send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{
		Counts: map[model.RowState]int{model.StateDelivered: 4, model.StateRefused: 2, model.StateSkipped: 1},
		Rows:   rows,
		Refused: []model.Refusal{
			{ID: "k-5", Row: 6, Reason: "row 6: writing the key failed: 503"},
			{ID: "k-6", Row: 7, Reason: "row 7 is discarded", Skipped: true},
			{ID: "m-1", Row: 8, Reason: "row 8: source mailer has no url_prefixes"},
		},
	}})
	r := m.replay.run
	want := map[string]model.RowState{"k-5": model.StateRefused, "k-6": model.StateSkipped, "m-1": model.StateRefused}
	for id, state := range want {
		row, ok := r.prog.Row(id)
		if !ok {
			t.Errorf("%s is not in the run's list", id)
			continue
		}
		if row.State != state || row.Detail == "" {
			t.Errorf("%s ends %q (%q), want %q with its reason", id, row.State, row.Detail, state)
		}
	}
	if r.prog.Counts["queued"] != 0 {
		t.Errorf("a finished run has %d queued rows", r.prog.Counts["queued"])
	}
	sum := 0
	for _, n := range r.prog.Counts {
		sum += n
	}
	// The list has every row; x/y counts the plan's calls (k-1…k-6), all of which ended.
	if sum != len(r.prog.Rows) || r.prog.Total != 6 || r.prog.Done != 6 || len(r.prog.Rows) != 7 {
		t.Errorf("totals disagree with the list: states sum %d, done %d, total %d (want 6 calls), rows %d (want 7)", sum, r.prog.Done, r.prog.Total, len(r.prog.Rows))
	}
	if out := plainScreen(m); !strings.Contains(out, "4 delivered · 2 refused · 1 skipped") {
		t.Errorf("the counts line lacks the refused and skipped rows:\n%s", out)
	}
}

// A refresh queued behind a write loads once, after the write, and that load is kept.
func TestQueuedRefreshLoadsOnce(t *testing.T) {
	st := &memStore{wb: func() *model.Workbook { return testWorkbook(t) }}
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Store = st })
	p := newPump(t, m)
	p.keys("s", "4") // one row: the write starts
	if !m.writes.writing {
		t.Fatal("s 4 starts a write")
	}
	p.keys("r")
	if !m.writes.refreshQueued {
		t.Fatal("r during a write queues a refresh")
	}
	p.until("the write and the refresh", func() bool { return !m.writes.writing && !m.load.loading && st.loadCount() > 0 })
	// A load thrown away starts the next one in the same Update (loading stays true), so
	// loading is false only once the last load is in.
	if n := st.loadCount(); n != 1 {
		t.Errorf("the queued refresh loaded %d times, want 1", n)
	}
}
