package tui

import (
	"context"

	"github.com/triage-dev/triage/model"
)

// Replayer replays dead-letter rows. The TUI declares it in model's replay vocabulary so that
// it depends on model only; replay.Runner (over replay.Run, the one replay-and-write-back
// loop, shared with `triage replay`) satisfies it as it is.
//
// The TUI hands both methods a snapshot: t is a copy of the loaded table whose Records are
// exactly recs (copies the UI never writes to), so neither method races with the screen. The
// same snapshot backs the confirm dialog (Plan) and the run (Replay) it confirms.
type Replayer interface {
	// Plan says what a replay of recs would send and what it would refuse. It does no I/O,
	// so it can back the confirm dialog and the dry-run preview: the TUI calls it from Update
	// for up to 2,000 rows and from a tea.Cmd above that.
	Plan(t *model.Table, recs []*model.Record) model.ReplayPlan
	// Replay sends the planned calls and writes the outcomes back. It blocks: the TUI calls
	// it from a tea.Cmd. progress is called from other goroutines, one call at a time; the
	// TUI's callback only appends to a queue and never blocks. Cancelling ctx (the user's
	// cancel, or quitting) must stop anything new from starting; calls in flight finish and
	// are written back, and Replay then returns with Cancelled set.
	Replay(ctx context.Context, t *model.Table, recs []*model.Record, progress func(model.ReplayEvent)) model.ReplaySummary
}
