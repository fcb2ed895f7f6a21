package model

import "testing"

func TestRowStateFinalAndSuccess(t *testing.T) {
	for _, s := range []RowState{"", StateQueued, StateSending} {
		if s.Final() || s.Success() {
			t.Errorf("%q: final %v success %v", s, s.Final(), s.Success())
		}
	}
	for _, s := range []RowState{StateDelivered, StateDuplicate} {
		if !s.Final() || !s.Success() {
			t.Errorf("%q: final %v success %v", s, s.Final(), s.Success())
		}
	}
	for _, s := range []RowState{StateRejected, StateSystemic, StateRetryable, StateDeferred, StateRefused, StateSkipped, StateNotAttempted} {
		if !s.Final() || s.Success() {
			t.Errorf("%q: final %v success %v", s, s.Final(), s.Success())
		}
	}
}

func TestReplaySummaryExitCodeAndSkipped(t *testing.T) {
	skipped := Refusal{ID: "a", Reason: "row 2: already delivered", Skipped: true}
	refused := Refusal{ID: "b", Reason: "row 3: source x is not configured"}
	for _, tc := range []struct {
		name    string
		sum     ReplaySummary
		code    int
		skipped int
	}{
		{"all delivered", ReplaySummary{Rows: []RowResult{{State: StateDelivered}, {State: StateDuplicate}}}, 0, 0},
		{"skipped by rule only", ReplaySummary{Refused: []Refusal{skipped}}, 0, 1},
		{"a dry run", ReplaySummary{Rows: []RowResult{{State: StateQueued}}}, 0, 0},
		{"refused for a problem", ReplaySummary{Refused: []Refusal{skipped, refused}}, 1, 1},
		{"retryable", ReplaySummary{Rows: []RowResult{{State: StateRetryable}}}, 1, 0},
		{"deferred", ReplaySummary{Rows: []RowResult{{State: StateDeferred}}}, 1, 0},
		{"a write conflict", ReplaySummary{WriteConflicts: []Conflict{{}}}, 1, 0},
		{"cancelled", ReplaySummary{Cancelled: true}, 1, 0},
		{"halted", ReplaySummary{Halted: &Halt{Cause: "systemic"}, NotAttempted: []string{"c"}}, 3, 0},
	} {
		if got := tc.sum.ExitCode(); got != tc.code {
			t.Errorf("%s: exit code %d, want %d", tc.name, got, tc.code)
		}
		if got := tc.sum.Skipped(); got != tc.skipped {
			t.Errorf("%s: skipped %d, want %d", tc.name, got, tc.skipped)
		}
	}
	if skipped.State() != StateSkipped || refused.State() != StateRefused {
		t.Errorf("refusal states %q %q", skipped.State(), refused.State())
	}
}
