package tui

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

// TestRequeueRederivesTheRow: after the write lands, the requeued job reads pending with no
// claim age (no "pending 2h"), isn't counted stale, and the filter finds it by its new cells.
func TestRequeueRederivesTheRow(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.NoColor = true })
	keys(m, "3", "Q", "y")
	if m.writes.inflight == nil {
		t.Fatalf("Q y writes:\n%s", plainScreen(m))
	}
	op := *m.writes.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 3}}}})
	ts := m.tabs.current()
	r, _, _ := ts.data.record("job-2")
	if r.Status != model.StatusPending || !r.Time.IsZero() {
		t.Errorf("job-2 after the requeue: status %q time %v, want pending and no claim time", r.Status, r.Time)
	}
	if ts.stale != 0 || ts.data.counts[model.StatusClaimed] != 0 || ts.data.counts[model.StatusPending] != 2 {
		t.Errorf("counts after the requeue: %d stale %v", ts.stale, ts.data.counts)
	}
	out := plainScreen(m)
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "job-2") && (strings.Contains(l, "2h") || strings.Contains(l, "stale") || strings.Contains(l, "worker-7")) {
			t.Errorf("job-2 still shows its claim: %q", l)
		}
	}
	if tabBar := strings.Split(out, "\n")[1]; strings.Contains(tabBar, "stale") || strings.Contains(tabBar, "claimed") {
		t.Errorf("the tab bar still counts the claim: %q", tabBar)
	}
	keys(m, "/")
	typeText(m, "worker-7")
	keys(m, "enter")
	for _, ri := range ts.visible {
		if ts.data.table.Records[ri].ID == "job-2" {
			t.Errorf("the filter still finds job-2 by the worker it no longer has")
		}
	}
}
