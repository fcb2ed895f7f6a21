package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

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

// TestShownMarksStayCounted checks the incrementally kept count of marks the filter hides
// against a rescan, through marks, filters and a write.
func TestShownMarksStayCounted(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	ts := m.tabs.current()
	check := func(step string) {
		t.Helper()
		_, hidden := ts.targets()
		if ts.nMarked == 0 {
			hidden = 0
		}
		if got := ts.hiddenMarks(); got != hidden {
			t.Fatalf("%s: hiddenMarks %d, a rescan says %d", step, got, hidden)
		}
	}
	steps := [][]string{{"space", "space", "j", "space"}, {"/", "a", "enter"}, {"space", "k", "space"}, {"*"},
		{"/", "backspace", "s", "t", "a", "t", "u", "s", ":", "r", "e", "a", "d", "enter"}, {"space", "space"},
		{"esc"}, {"j", "space"}, {"V"}, {"space"}}
	for i, s := range steps {
		keys(m, s...)
		check(fmt.Sprint("step ", i, " ", s))
	}
	keys(m, "s", "4", "y")
	if m.writes.inflight != nil {
		op := *m.writes.inflight
		send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0]}}}})
		check("after a write")
	}
}
