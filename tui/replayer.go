package tui

import (
	"context"

	"github.com/triage-dev/triage/model"
)

// Replayer replays dead-letter rows. The TUI declares it so that it depends on model only;
// main adapts the replay package (the one replay-and-write-back loop, shared with
// `triage replay`) to it.
//
// The TUI hands both methods a snapshot: t is a copy of the loaded table whose Records are
// exactly recs (copies the UI never writes to), so neither method races with the screen. The
// same snapshot backs the confirm dialog (Plan) and the run (Replay) it confirms.
type Replayer interface {
	// Plan says what a replay of recs would send and what it would refuse. It does no I/O,
	// so it can back the confirm dialog and the dry-run preview: the TUI calls it from Update
	// for up to 2,000 rows and from a tea.Cmd above that.
	Plan(t *model.Table, recs []*model.Record) ReplayPlan
	// Replay sends the planned calls and writes the outcomes back. It blocks: the TUI calls
	// it from a tea.Cmd. progress is called from other goroutines, one call at a time; the
	// TUI's callback only appends to a queue and never blocks. Cancelling ctx (the user's
	// cancel, or quitting) must stop anything new from starting; calls in flight finish and
	// are written back, and Replay then returns with Cancelled set.
	Replay(ctx context.Context, t *model.Table, recs []*model.Record, progress func(ReplayProgress)) ReplayReport
}

// ReplayPlan is what a replay would do.
type ReplayPlan struct {
	Calls   []PlannedCall
	Refused []RefusedRow
	// Sources and Destinations are the distinct sources and URL prefixes (scheme, host and
	// path up to the last slash) of Calls, for the confirm dialog.
	Sources      []string
	Destinations []string
}

// PlannedCall is one call a replay would send.
type PlannedCall struct {
	ID, Method, URL, Key, Source string
	Row                          int
	// Headers are redacted: "Authorization: env:CRM_TOKEN (set)".
	Headers []string
}

// RefusedRow is a row a replay will not send, and why. Skipped rows are left out by rule
// (delivered, rejected, discarded) rather than by a problem.
type RefusedRow struct {
	ID      string
	Row     int
	Reason  string
	Skipped bool
}

// ReplayProgress is one row's state change during a run, with the run's totals so far. An
// event with an empty ID only reports totals or a halt. The TUI keeps its own per-state
// counts from the row states; Counts is informational.
type ReplayProgress struct {
	ID       string
	Row      int
	State    string // queued, sending, delivered, duplicate, rejected, systemic, retryable, deferred, refused, not-attempted
	Detail   string
	Attempts int
	Done     int
	Total    int
	Counts   map[string]int
	Halt     *ReplayHalt
}

// ReplayHalt is why a run stopped sending, and what to fix. The TUI's banner reads
// "!! HALTED: <Cause> — <Detail>" (Detail should name the fix: "401 from crm: check the
// CRM_TOKEN secret").
type ReplayHalt struct {
	Cause, Source, Detail string
}

// ReplayReport is how a run ended. Rows are the planned rows' final states (they override
// what the progress events said); Conflicts and WriteErrors are one line each.
type ReplayReport struct {
	Counts       map[string]int
	Rows         []ReplayProgress
	Halt         *ReplayHalt
	NotAttempted []string
	Refused      []RefusedRow
	WriteErrors  []string
	Conflicts    []string
	Cancelled    bool
}
