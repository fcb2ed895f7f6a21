package replay

import (
	"fmt"
	"strings"

	"github.com/triage-dev/triage/model"
)

// Selection is what a command line picked out of a dead-letter tab for a run (Select): the
// records to hand to Run, and the IDs asked for that are not among them.
type Selection struct {
	// Records are the rows to hand to Run, in tab order (--all) or in the order given.
	Records []*model.Record
	// Unknown are IDs given that no row has.
	Unknown []string
	// Excluded are IDs given whose row is of another source than the one asked for.
	Excluded []model.Refusal
	// Named is set when the rows were named by ID rather than picked by --all.
	Named bool
}

// Select picks the records of t to hand to Run: every row (all) or the rows with the given
// IDs (trimmed, each once), in both cases only those of source when it is set. Rows that must
// not be sent (delivered, rejected, discarded, bad) are still picked: Plan skips or refuses
// them with a reason, so the summary can say why.
func Select(t *model.Table, ids []string, all bool, source string) Selection {
	var sel Selection
	ofSource := func(r *model.Record) bool {
		return source == "" || rowSource(t, r) == source
	}
	if all {
		for i := range t.Records {
			if r := &t.Records[i]; ofSource(r) {
				sel.Records = append(sel.Records, r)
			}
		}
		return sel
	}
	sel.Named = true
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if seen[id] {
			continue
		}
		seen[id] = true
		i := t.Index(id)
		if i < 0 {
			sel.Unknown = append(sel.Unknown, id)
			continue
		}
		r := &t.Records[i]
		if !ofSource(r) {
			sel.Excluded = append(sel.Excluded, model.Refusal{ID: id, Row: r.Row,
				Reason: fmt.Sprintf("row %d: its source is %q, not %q; not sent", r.Row, rowSource(t, r), source)})
			continue
		}
		sel.Records = append(sel.Records, r)
	}
	return sel
}

// TabHasSource reports whether some row of t names source (trimmed) in its source column: a
// --source that no row has and no config names is a mistake, not an empty selection.
func TabHasSource(t *model.Table, source string) bool {
	for i := range t.Records {
		if rowSource(t, &t.Records[i]) == source {
			return true
		}
	}
	return false
}

func rowSource(t *model.Table, r *model.Record) string {
	return strings.TrimSpace(t.Get(r, model.FSource))
}

// Selected is how many rows the command line picked, unknown and excluded IDs included.
func (s Selection) Selected() int {
	return len(s.Records) + len(s.Unknown) + len(s.Excluded)
}

// Stuck lists the rows a run skipped by rule that still are not done: a rejected (sticky) or
// discarded row named by ID was asked for and not replayed, which DESIGN §7 counts as "some
// rows not done". Under --all, skipping them is the point, so Stuck is nil.
func (s Selection) Stuck(t *model.Table, sum model.ReplaySummary) []string {
	if !s.Named {
		return nil
	}
	var ids []string
	for _, rf := range sum.Refused {
		if !rf.Skipped {
			continue
		}
		if i := t.Index(rf.ID); i >= 0 {
			if st := t.Records[i].Status; st == model.StatusRejected || st == model.StatusDiscarded {
				ids = append(ids, rf.ID)
			}
		}
	}
	return ids
}

// The exit codes of `triage replay` (DESIGN §7).
const (
	// ExitDone: every selected row is done (delivered, duplicate, or skipped by rule).
	ExitDone = 0
	// ExitNotDone: some selected row is not (see ExitCode).
	ExitNotDone = 1
	// ExitHalted: the run halted.
	ExitHalted = 3
)

// ExitCode is the exit status of a run of sel that ended with sum (DESIGN §7): ExitHalted
// when it halted; ExitNotDone when some row is not done: the summary's own (rejected,
// retryable, deferred, systemic, not attempted, refused for a problem, a write-back conflict
// or error, an outcome not written back, an interrupted run; model.ReplaySummary.ExitCode),
// an unknown or excluded ID, or a row named by ID that was skipped as rejected or discarded
// (Stuck); else ExitDone.
func (s Selection) ExitCode(t *model.Table, sum model.ReplaySummary) int {
	code := sum.ExitCode()
	if code == ExitDone && (len(s.Unknown) > 0 || len(s.Excluded) > 0 || len(s.Stuck(t, sum)) > 0) {
		code = ExitNotDone
	}
	return code
}

// ExitAfterReport is the exit code once the report asked for was written (ok) or not: a
// report that could not be written turns a clean run's ExitDone into ExitNotDone (the run is
// done, but what was asked for is missing, and cron must say so) and leaves the others as
// they are.
func ExitAfterReport(code int, ok bool) int {
	if !ok && code == ExitDone {
		return ExitNotDone
	}
	return code
}
