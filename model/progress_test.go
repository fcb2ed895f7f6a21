package model

import (
	"reflect"
	"testing"
)

// TestRunProgressFromPlanToEnd: a run's progress starts with every planned call queued, and
// each event moves its row (the fields it leaves empty kept), the counts with it, done never
// back, the runner's total over the plan's, and the first halt only, reported once.
func TestRunProgressFromPlanToEnd(t *testing.T) {
	p := NewRunProgress([]PlannedCall{
		{ID: "a", Row: 2, Source: "crm", URL: "https://crm.test/a", Key: "ka"},
		{ID: "b", Row: 3, Source: "crm", URL: "https://crm.test/b", Key: "kb"},
		{ID: "c", Row: 4, Source: "billing", URL: "https://billing.test/c", Key: "kc"},
	})
	if p.Total != 3 || p.Done != 0 || len(p.Rows) != 3 || !reflect.DeepEqual(p.Counts, map[RowState]int{StateQueued: 3}) {
		t.Fatalf("before anything moved: total %d done %d rows %d counts %v", p.Total, p.Done, len(p.Rows), p.Counts)
	}
	steps := []struct {
		ev     ReplayEvent
		halted bool
	}{
		{ReplayEvent{Row: RowResult{ID: "a", State: StateSending}, Total: 3}, false},
		{ReplayEvent{Row: RowResult{ID: "a", State: StateDelivered, Attempts: 1, Detail: "200 OK"}, Done: 1, Total: 3}, false},
		{ReplayEvent{Row: RowResult{ID: "b", State: StateSending}, Done: 1}, false},
		// A row the plan did not have (refused inside the run) is added at the end.
		{ReplayEvent{Row: RowResult{ID: "z", Row: 9, State: StateRefused, Detail: "row changed"}, Done: 1}, false},
		{ReplayEvent{Row: RowResult{ID: "b", State: StateSystemic, Attempts: 1}, Done: 2, Total: 4,
			Halted: &Halt{Cause: "systemic", Source: "crm"}}, true},
		// Later events keep the halt set; an older Done does not take done back; a bare
		// event (no row) moves only the totals.
		{ReplayEvent{Done: 1, Halted: &Halt{Cause: "other"}}, false},
		// An event with only a state keeps the row's detail, attempts and plan fields.
		{ReplayEvent{Row: RowResult{ID: "a", State: StateDuplicate}, Done: 2}, false},
	}
	for i, s := range steps {
		h := p.Apply(s.ev)
		if (h != nil) != s.halted {
			t.Errorf("step %d: halt returned %v, want one: %v", i, h, s.halted)
		}
	}
	if p.Done != 2 || p.Total != 4 {
		t.Errorf("done/total %d/%d, want 2/4", p.Done, p.Total)
	}
	if p.Halt == nil || p.Halt.Cause != "systemic" {
		t.Errorf("halt %v, want the first one (systemic)", p.Halt)
	}
	want := []RowResult{
		{ID: "a", Row: 2, Source: "crm", URL: "https://crm.test/a", Key: "ka", State: StateDuplicate, Attempts: 1, Detail: "200 OK"},
		{ID: "b", Row: 3, Source: "crm", URL: "https://crm.test/b", Key: "kb", State: StateSystemic, Attempts: 1},
		{ID: "c", Row: 4, Source: "billing", URL: "https://billing.test/c", Key: "kc", State: StateQueued},
		{ID: "z", Row: 9, State: StateRefused, Detail: "row changed"},
	}
	if !reflect.DeepEqual(p.Rows, want) {
		t.Errorf("rows\n%+v\nwant\n%+v", p.Rows, want)
	}
	wantCounts := map[RowState]int{StateDuplicate: 1, StateSystemic: 1, StateQueued: 1, StateRefused: 1}
	for _, s := range []RowState{StateQueued, StateSending, StateDelivered, StateDuplicate, StateSystemic, StateRefused} {
		if p.Counts[s] != wantCounts[s] {
			t.Errorf("%s: %d rows, want %d (counts %v)", s, p.Counts[s], wantCounts[s], p.Counts)
		}
	}
	if row, ok := p.Row("c"); !ok || row.State != StateQueued {
		t.Errorf("Row(c) = %+v, %v", row, ok)
	}
	if _, ok := p.Row("nope"); ok {
		t.Error("Row of an unknown ID found something")
	}
}

// TestRunProgressZeroValue: serve's shared run starts from a zero RunProgress (rows in the
// order they first move, none queued from the plan).
func TestRunProgressZeroValue(t *testing.T) {
	var p RunProgress
	if _, ok := p.Row("a"); ok {
		t.Fatal("an empty run has a row")
	}
	p.Apply(ReplayEvent{Row: RowResult{ID: "b", State: StateSending}, Total: 2})
	p.Apply(ReplayEvent{Row: RowResult{ID: "a", State: StateSending}})
	p.Apply(ReplayEvent{Row: RowResult{ID: "b", State: StateRetryable, Detail: "503"}, Done: 1})
	if len(p.Rows) != 2 || p.Rows[0].ID != "b" || p.Rows[1].ID != "a" || p.Rows[0].Detail != "503" {
		t.Errorf("rows %+v, want b then a, b's detail kept", p.Rows)
	}
	if p.Counts[StateSending] != 1 || p.Counts[StateRetryable] != 1 || p.Done != 1 || p.Total != 2 {
		t.Errorf("counts %v done %d/%d", p.Counts, p.Done, p.Total)
	}
}
