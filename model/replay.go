package model

import "fmt"

// The replay vocabulary: what a replay of dead-letter rows plans, reports while it runs, and
// returns. The replay package produces these; the TUI and the CLI read them.

// RowState is a row's state in a replay run.
type RowState string

// The row states. The final outcomes of a sent row (delivered, duplicate, rejected, systemic,
// retryable) are named as the replay package's outcomes.
const (
	// StateQueued: planned, not sent yet (a dry run leaves every planned row queued).
	StateQueued RowState = "queued"
	// StateSending: a request for the row is in flight.
	StateSending RowState = "sending"
	// StateDelivered: the destination acted on the call.
	StateDelivered RowState = "delivered"
	// StateDuplicate: the destination had already acted on this key; counts as delivered.
	StateDuplicate RowState = "duplicate"
	// StateRejected: a permanent answer about this row only; the row becomes sticky.
	StateRejected RowState = "rejected"
	// StateSystemic: the integration itself is broken; the run halts.
	StateSystemic RowState = "systemic"
	// StateRetryable: no usable answer; replaying the row later is harmless.
	StateRetryable RowState = "retryable"
	// StateDeferred: the destination asked us to come back later (Retry-After too long).
	StateDeferred RowState = "deferred"
	// StateRefused: not sent, because of a problem with the row (see its Refusal).
	StateRefused RowState = "refused"
	// StateSkipped: not sent, by rule (already delivered, rejected, discarded): nothing wrong.
	StateSkipped RowState = "skipped"
	// StateNotAttempted: planned but never sent (the run halted or was cancelled first).
	StateNotAttempted RowState = "not-attempted"
)

// Success reports whether the destination has acted on the row (delivered or duplicate).
func (s RowState) Success() bool { return s == StateDelivered || s == StateDuplicate }

// Final reports whether the state is a row's last one in a run (anything but queued,
// sending, or no state yet).
func (s RowState) Final() bool { return s != "" && s != StateQueued && s != StateSending }

// Halt is why a run stopped sending: what tripped the switch and what to fix.
type Halt struct {
	// Cause is "systemic" or "3 retryable in a row".
	Cause string
	// Source is the source of the row that tripped it.
	Source string
	// Detail says what to fix: "401 from crm: check the CRM_TOKEN secret".
	Detail string
}

// String renders the halt for a log line or a banner.
func (h *Halt) String() string {
	return fmt.Sprintf("HALTED (%s, source %s): %s", h.Cause, h.Source, h.Detail)
}

// Refusal is a row a run will not send, and why. Reason names the row.
type Refusal struct {
	ID     string
	Row    int
	Reason string
	// Skipped is set for rows left out by rule (already delivered, rejected, discarded) rather
	// than for a problem with the row.
	Skipped bool
}

// State is the refusal's row state: skipped or refused.
func (r Refusal) State() RowState {
	if r.Skipped {
		return StateSkipped
	}
	return StateRefused
}

// PlannedCall is one call a replay would send.
type PlannedCall struct {
	ID     string
	Row    int
	Method string
	URL    string
	Key    string
	Source string
	// Headers are the source's headers, redacted: "Authorization: env:CRM_TOKEN (set)".
	Headers []string
}

// ReplayPlan is what a replay would do, without doing it.
type ReplayPlan struct {
	Calls   []PlannedCall
	Refused []Refusal
	// Sources and Destinations are the distinct sources and URL prefixes (scheme, host and
	// path up to the last slash) of Calls, for a confirm dialog.
	Sources      []string
	Destinations []string
}

// RowResult is a row's state in a run.
type RowResult struct {
	ID     string
	Row    int
	Source string
	URL    string
	Key    string
	// State is where the row is: queued, sending, or a final state.
	State RowState
	// Attempts is how many requests this run sent for the row.
	Attempts int
	// Detail says what happened, in one line.
	Detail string
	// WriteBack says why the row's outcome was not written back to its row ("" when it was, or
	// there was nothing to write): the sheet still shows the row as before the run, so it is
	// not done, whatever the destination answered.
	WriteBack string
}

// Done reports whether the row is done: the destination acted on it (delivered or duplicate)
// and its row says so (its outcome was written back).
func (r RowResult) Done() bool { return r.State.Success() && r.WriteBack == "" }

// ReplayEvent is one progress report of a run: a row's state change with the run's totals so
// far. An event whose Row has no ID only reports totals or a halt.
type ReplayEvent struct {
	// Row is the row whose state changed (zero for a bare halt report).
	Row RowResult
	// Counts are the final outcomes so far, by state.
	Counts map[RowState]int
	// Done is how many rows are final; Total how many the run planned to send.
	Done, Total int
	// Halted is set on the event that reports the halt (and stays set on later events).
	Halted *Halt
}

// ReplaySummary is the result of a run.
type ReplaySummary struct {
	// Counts are rows by final state (refusals count as refused or skipped).
	Counts map[RowState]int
	// Rows are the planned rows' final results, in plan order.
	Rows []RowResult
	// Halted is set when the halt switch tripped.
	Halted *Halt
	// NotAttempted are the IDs of planned rows that were never sent (halt or cancel).
	NotAttempted []string
	// Refused are rows that were not planned or not sent, each with its reason.
	Refused []Refusal
	// WriteRequests counts the write requests the store sent for the run (the check-and-key
	// write before sending and the outcome flushes: every round, fence and retry of each, when
	// the store counts them, see replay.WriteCounter; else one per write).
	WriteRequests int
	// WriteConflicts are write-back edits not written because a cell changed meanwhile.
	WriteConflicts []Conflict
	// WriteErrors describe write-backs that failed or found the row gone. They are not
	// retried: replaying those rows again is harmless (invariant 3).
	WriteErrors []string
	// Held are the rows another live run was replaying, by run: skipped, never sent twice at
	// once (see Leases).
	Held []HeldGroup
	// Recovered are cells another triage's unfinished write had left on rows it was not meant
	// for, which the run's writes put back first (ApplyResult.Recovered).
	Recovered []Recovery
	// DryRun lists what would be sent, for a dry run.
	DryRun []PlannedCall
	// Cancelled is set when the run's context was cancelled before every row was final.
	Cancelled bool
	// TimeUp is set when the run stopped starting sends because the time it was given was
	// nearly up (replay.RunOptions.Deadline) and that left rows for the next run: the rows it
	// never started (in NotAttempted) or whose retries it cut short.
	TimeUp bool
	// LeftOut are the rows a row limit (replay.RunOptions.Limit) left for the next run, each
	// with its reason: rows the run would have sent, newer than the ones it took.
	LeftOut []Refusal
}

// Skipped is how many rows were left out by rule (see Refusal.Skipped).
func (s ReplaySummary) Skipped() int {
	n := 0
	for _, r := range s.Refused {
		if r.Skipped {
			n++
		}
	}
	return n
}

// ExitCode is the exit status of `triage replay` for the summary (DESIGN §7): 3 when the run
// halted; 1 when some row isn't done (rejected, retryable, deferred, systemic, not attempted,
// refused for a problem, left out by a row limit, a write-back conflict or error, or an
// outcome not written back); else 0.
func (s ReplaySummary) ExitCode() int {
	if s.Halted != nil {
		return 3
	}
	if len(s.NotAttempted) > 0 || len(s.LeftOut) > 0 || len(s.WriteConflicts) > 0 || len(s.WriteErrors) > 0 || s.Cancelled {
		return 1
	}
	for _, r := range s.Refused {
		if !r.Skipped {
			return 1
		}
	}
	for _, r := range s.Rows {
		if !r.Done() && r.State != StateQueued {
			return 1
		}
	}
	return 0
}
