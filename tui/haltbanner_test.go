package tui

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

// The halt banner belongs to the run that halted: it shows on that run's tab, not on the
// others, and a later run takes it down, so "Replay finished" is never topped by an earlier
// run's "HALTED".
func TestHaltBannerBelongsToItsRun(t *testing.T) {
	fr := newFakeReplayer()
	halt := &model.Halt{Cause: "systemic", Detail: "401 from billing", Source: "crm"}
	fr.events = []model.ReplayEvent{
		{Row: model.RowResult{ID: "k-1", State: "sending"}, Total: 1},
		{Row: model.RowResult{ID: "k-1", State: "retryable", Attempts: 1, Detail: "401"}, Done: 1, Total: 1, Halted: halt},
	}
	fr.report = model.ReplaySummary{Counts: map[model.RowState]int{"retryable": 1}, Halted: halt,
		Rows: []model.RowResult{{ID: "k-1", State: "retryable", Attempts: 1, Detail: "401"}}}
	m, _ := newReplayModel(t, fr, 100, 30)
	p := newPump(t, m)
	p.keys("2", "R", "y")
	fr.waitStarted(t)
	fr.release <- struct{}{}
	p.until("the halted run's end", func() bool { return m.replay.run != nil && m.replay.run.finished && !m.load.loading })
	if !strings.Contains(plainScreen(m), "HALTED: systemic — 401 from billing") {
		t.Fatalf("the halted run shows no banner:\n%s", plainScreen(m))
	}
	p.keys("esc") // back to the table: the banner stays on the run's tab
	if !strings.Contains(plainScreen(m), "HALTED") {
		t.Errorf("the banner left the halted run's tab:\n%s", plainScreen(m))
	}
	p.keys("3")
	if out := plainScreen(m); strings.Contains(out, "HALTED") || strings.Contains(out, "dismiss halt") {
		t.Errorf("the banner (or its hint) followed to another tab:\n%s", out)
	}
	p.keys("2")
	if !strings.Contains(plainScreen(m), "HALTED") {
		t.Errorf("back on the run's tab, the banner is gone:\n%s", plainScreen(m))
	}

	// A later run that finishes normally: no banner of the earlier one above its report.
	fr.events = []model.ReplayEvent{
		{Row: model.RowResult{ID: "k-2", State: "sending"}, Total: 1},
		{Row: model.RowResult{ID: "k-2", State: "delivered", Attempts: 1, Detail: "200"}, Done: 1, Total: 1},
	}
	fr.report = model.ReplaySummary{Counts: map[model.RowState]int{"delivered": 1},
		Rows: []model.RowResult{{ID: "k-2", State: "delivered", Attempts: 1, Detail: "200"}}}
	p.keys("j", "R", "y")
	fr.waitStarted(t)
	fr.release <- struct{}{}
	p.until("the second run's end", func() bool { return m.replay.run != nil && m.replay.run.finished && !m.load.loading })
	if out := plainScreen(m); strings.Contains(out, "HALTED") {
		t.Errorf("the second run's report is topped by the first run's halt:\n%s", out)
	}
}
