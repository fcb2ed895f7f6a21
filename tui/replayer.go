package tui

import (
	"context"

	"github.com/triage-dev/triage/model"
)

// Replayer replays dead-letter rows. The TUI declares it so that it depends on model only;
// main adapts the replay package (the one replay-and-write-back loop, shared with
// `triage replay`) to it.
type Replayer interface {
	// Plan says what a replay of recs would send and what it would refuse. It does no I/O,
	// so it can back the confirm dialog and the dry-run preview from Update.
	Plan(t *model.Table, recs []*model.Record) ReplayPlan
	// Replay sends the planned calls and writes the outcomes back. It blocks: call it from a
	// tea.Cmd. progress is called from other goroutines, one call at a time, and must be
	// cheap (post a message).
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

// ReplayProgress is one row's state change during a run, with the run's totals so far.
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

// ReplayHalt is why a run stopped sending, and what to fix.
type ReplayHalt struct {
	Cause, Source, Detail string
}

// ReplayReport is how a run ended.
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
