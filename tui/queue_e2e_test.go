package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

const queueSheet = "queue-sheet"

// queueFixture is a Jobs tab on the emulator, with claims of known ages at queueNow.
var queueNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func queueE2ERows() [][]any {
	at := func(d time.Duration) string { return queueNow.Add(-d).Format(time.RFC3339) }
	return [][]any{
		{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
		{"job-1", "email", `{"to":"a@example.com"}`, "error", "w-1", at(3 * time.Hour), "SMTP 550: mailbox unavailable", at(3 * time.Hour), "3"},
		{"job-2", "email", `{"to":"b@example.com"}`, "pending", nil, nil, nil, at(time.Hour), "0"},
		{"job-3", "export", `{"sheet":"x"}`, "error", "w-2", at(2 * time.Hour), "quota exceeded", at(2 * time.Hour), "2"},
		{"job-4", "export", `{"sheet":"y"}`, "claimed", "w-3", at(2 * time.Hour), nil, at(2 * time.Hour), "1"},
		{"job-5", "email", `{"to":"c@example.com"}`, "claimed", "w-4", at(29 * time.Minute), nil, at(29 * time.Minute), "1"},
		{"job-6", "email", `{"to":"d@example.com"}`, "error", "w-1", at(time.Hour), "bounced", at(time.Hour), "1"},
		{"job-7", "email", `{"to":"e@example.com"}`, "done", "w-1", at(10 * time.Minute), nil, at(5 * time.Minute), "1"},
	}
}

// TestQueueClearErrorAndRequeueOverTheWire: through the real store on the emulator, `e` on
// two marked error jobs and `Q` on the stale claims change exactly the intended rows; the
// claim 29 minutes old is never listed at the 30-minute threshold.
func TestQueueClearErrorAndRequeueOverTheWire(t *testing.T) {
	sh := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: queueSheet, Title: "Job desk", Sheets: []*emulator.Sheet{{Title: "Jobs", Rows: queueE2ERows()}}})
	emu := sh.Emu
	store := sh.Store(sheets.Options{SpreadsheetID: queueSheet})
	snapshot := func() map[string][]string {
		out := map[string][]string{}
		for _, row := range emu.Cells(queueSheet, "Jobs")[1:] {
			cells := make([]string, 9)
			for i := range cells {
				if i < len(row) {
					cells[i] = model.CellString(row[i])
				}
			}
			out[cells[0]] = cells
		}
		return out
	}
	before := snapshot()

	m := New(Options{Store: store, SpreadsheetID: queueSheet, Now: func() time.Time { return queueNow }})
	tm := teatest.NewTestModel(t, probed{m}, teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor), tea.WithEnvironment([]string{"TERM=tmux-256color", "TMUX=/tmp/tmux-1000/default,1,0"})))
	waitScreen(t, tm, "Job desk", "stale 2h", "1 stale")

	// Clear the sticky errors of job-1 and job-3 (marked), not job-6.
	tm.Type("/status:error")
	tm.Send(press("enter"))
	tm.Send(press("space")) // job-1
	tm.Send(press("space")) // job-3
	tm.Send(press("e"))
	waitScreen(t, tm, "Clear the sticky error of 2 rows? [y/N]")
	tm.Type("y")
	waitScreen(t, tm, "2 errors cleared, back to pending")
	tm.Send(press("esc")) // clear the filter

	// Requeue: only job-4 (2h) is listed; job-5 (29m) is not.
	tm.Send(press("Q"))
	waitScreen(t, tm, "Requeue 1 stale claim? [y/N]", "job-4", "w-3", "claimed 2h ago")
	tm.Type("y")
	waitScreen(t, tm, "1 stale claim requeued")
	tm.Send(press("q"))
	fm := finalModel(t, tm)
	if ts := fm.tabs.current(); ts == nil || ts.stale != 0 || ts.data.counts["error"] != 1 {
		t.Errorf("after the writes: %d stale, %d errors shown; want 0 and 1", ts.stale, ts.data.counts["error"])
	}

	after := snapshot()
	now := model.FormatTime(queueNow)
	for id, want := range map[string]map[int]string{
		"job-1": {3: "pending", 4: "", 5: "", 7: now}, // pending, claim released, the error text kept
		"job-3": {3: "pending", 4: "", 5: "", 7: now},
		"job-4": {3: "pending", 4: "", 5: "", 7: now}, // the claim is released
	} {
		for col, v := range want {
			if after[id][col] != v {
				t.Errorf("%s column %d = %q, want %q", id, col, after[id][col], v)
			}
		}
		// Every other cell of the row is as it was.
		for col := range after[id] {
			if _, changed := want[col]; !changed && after[id][col] != before[id][col] {
				t.Errorf("%s column %d changed: %q → %q", id, col, before[id][col], after[id][col])
			}
		}
	}
	for _, id := range []string{"job-2", "job-5", "job-6", "job-7"} {
		if strings.Join(after[id], "|") != strings.Join(before[id], "|") {
			t.Errorf("%s changed: %v → %v", id, before[id], after[id])
		}
	}
}

// TestStaleThreshold: at the 30-minute threshold a claim 29 minutes old (or exactly 30) is
// never listed nor marked; one 31 minutes old is.
func TestStaleThreshold(t *testing.T) {
	wb := testWorkbook(t)
	at := func(d time.Duration) string { return testNow.Add(-d).Format(time.RFC3339) }
	queue := func(rows ...[]string) *model.Table {
		return mustDecode(t, model.RoleQueue, rowsOf(append([][]string{{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"}}, rows...)...))
	}
	wb.Tabs[2] = queue(
		[]string{"job-a", "email", `{}`, "claimed", "w-1", at(29 * time.Minute), "", "", "1"},
		[]string{"job-b", "email", `{}`, "claimed", "w-2", at(30 * time.Minute), "", "", "1"},
	)
	m := newLoaded(t, wb, 100, 30)
	keys(m, "3", "Q")
	if m.dialog != nil {
		t.Fatalf("claims of 29m and exactly 30m are not stale:\n%s", plainScreen(m))
	}
	out := plainScreen(m)
	if !strings.Contains(out, "no stale claims among the shown rows (stale: over 30m); the oldest claim is 30m old") {
		t.Errorf("Q without stale claims says why:\n%s", out)
	}
	if strings.Contains(out, "stale 29m") || strings.Contains(out, "stale 30m") || strings.Contains(out, "stale ·") {
		t.Errorf("no claim is marked stale:\n%s", out)
	}

	wb.Tabs[2] = queue(
		[]string{"job-a", "email", `{}`, "claimed", "w-1", at(29 * time.Minute), "", "", "1"},
		[]string{"job-b", "email", `{}`, "claimed", "w-2", at(31 * time.Minute), "", "", "1"},
	)
	m = newLoaded(t, wb, 100, 30)
	keys(m, "3")
	if out := plainScreen(m); !strings.Contains(out, "stale 31m") || !strings.Contains(out, "3 Jobs 1 stale · 2 claimed") {
		t.Errorf("the stale claim is marked in the table and counted in the tab bar:\n%s", out)
	}
	keys(m, "Q")
	d, ok := m.dialog.(confirm)
	if !ok {
		t.Fatalf("job-b is stale:\n%s", plainScreen(m))
	}
	if len(d.list) != 1 || !strings.HasPrefix(d.list[0], "job-b") || len(d.writeOp().edits) != 1 || d.writeOp().edits[0].ID != "job-b" {
		t.Errorf("only job-b is listed and requeued: %q %v", d.list, d.writeOp().edits)
	}
	if out := plainScreen(m); !strings.Contains(out, "job-b          w-2            claimed 31m ago") || strings.Contains(out, "job-a          w-1") {
		t.Errorf("the dialog lists exactly job-b, its worker and age:\n%s", out)
	}
}
