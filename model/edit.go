package model

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Edit is a change to one row, located by identity at write time. Expect holds the values
// the user saw; if any cell differs when the write happens, the edit is a conflict and
// nothing of it is written (invariant 1).
type Edit struct {
	Tab    string
	ID     string
	Expect map[Field]string
	Set    map[Field]string
}

// Inverse returns the edit that undoes e: it expects e's new values and restores the old.
// Only fields that e both expected and set can be restored.
func (e Edit) Inverse() Edit {
	inv := Edit{Tab: e.Tab, ID: e.ID, Expect: map[Field]string{}, Set: map[Field]string{}}
	for f, v := range e.Set {
		if old, ok := e.Expect[f]; ok {
			inv.Expect[f] = v
			inv.Set[f] = old
		}
	}
	return inv
}

// String describes an edit for logs and toasts.
func (e Edit) String() string {
	keys := make([]string, 0, len(e.Set))
	for f := range e.Set {
		keys = append(keys, string(f))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, e.Set[Field(k)])
	}
	return fmt.Sprintf("%s/%s: %s", e.Tab, e.ID, strings.Join(parts, " "))
}

// Conflict is an edit that was not written because a cell changed since the user saw it.
type Conflict struct {
	Edit  Edit
	Row   int
	Field Field
	Saw   string
	Now   string
	// Reason, when set, explains a conflict that is not a changed cell (a duplicated ID, a
	// column that no longer exists).
	Reason string
	// Undecided says the store gave up deciding the edit: the rows kept moving (or changing)
	// under every round of its write, not because of anything about this row. A replay stops
	// sending once its write-back meets one: outcomes it can't record would only pile up.
	Undecided bool
}

func (c Conflict) String() string {
	// A conflict found before its row was (it never was) names the ID alone.
	where := fmt.Sprintf("%s row %d (%s)", c.Edit.Tab, c.Row, c.Edit.ID)
	if c.Row <= 0 {
		where = fmt.Sprintf("%s %s", c.Edit.Tab, c.Edit.ID)
	}
	if c.Reason != "" {
		return fmt.Sprintf("%s: %s; not written", where, c.Reason)
	}
	return fmt.Sprintf("%s: %s was %q when you looked, is %q now; not overwritten", where, c.Field, c.Saw, c.Now)
}

// Applied is an edit that was written, and the row it landed on.
type Applied struct {
	Edit Edit
	Row  int
}

// ApplyResult reports what became of each edit of a write: written, a conflict, or its ID
// gone from the sheet. Every edit appears in exactly one list.
type ApplyResult struct {
	Applied   []Applied
	Conflicts []Conflict
	Missing   []Edit
	// Damaged are cells of other rows that a write hit and could not put back exactly (see
	// Damage). They are not edits: every edit is still in one of the lists above.
	Damaged []Damage
	// Recovered are cells another triage's unfinished write (its process killed, or its
	// answer lost and never settled) had left on rows it was not meant for, which this write
	// found in that write's journal and put back first.
	Recovered []Recovery
}

// Recovery is one cell put back from another triage's unfinished write (ApplyResult.Recovered).
type Recovery struct {
	Tab string
	// Row is the row (1-based) it was put back on; ID the row's identity, if any.
	Row int
	ID  string
	// Column is the column's header; Left the value the unfinished write left there, Restored
	// what the cell held before it, as its journal shows.
	Column, Left, Restored string
	// Writer names the write's process ("ann on jump1 (pid 4242)").
	Writer string
}

func (r Recovery) String() string {
	who := fmt.Sprintf("row %d", r.Row)
	if r.ID != "" {
		who += fmt.Sprintf(" (%s)", r.ID)
	}
	return fmt.Sprintf("%s %s: put %s back to %q, where an unfinished write of %s had left %q", r.Tab, who, r.Column, r.Restored, r.Writer, r.Left)
}

// Damage is a cell of a row that was not a write's target: the write hit it (someone sorted,
// inserted or deleted rows, or changed the row, between triage's read and its write), and the
// row then changed again, past recognition, before triage could put the cell back. The
// journal says exactly what it held (Before); a person must look at it.
type Damage struct {
	Tab string
	// Row is the row (1-based) it was on when triage last saw it; ID its identity, if any.
	Row int
	ID  string
	// Column is the column's header; Ours the value triage's write left there, Before what
	// the cell held just before.
	Column, Ours, Before string
	// Note, when set, says why the cell can't be checked at all (a write's journal deleted or
	// edited by hand before it was settled): the write may have left Ours there, or not.
	Note string
}

func (d Damage) String() string {
	who := fmt.Sprintf("row %d", d.Row)
	if d.Row <= 0 {
		who = "a row"
	}
	if d.ID != "" {
		who += fmt.Sprintf(" (%s)", d.ID)
	}
	if d.Note != "" {
		what := ""
		if d.Column != "" {
			what = fmt.Sprintf(" %s may hold %q that triage wrote there, or not:", d.Column, d.Ours)
		}
		return fmt.Sprintf("%s %s:%s %s: check it", d.Tab, who, what, d.Note)
	}
	return fmt.Sprintf("%s %s: triage's write hit it by mistake and it changed again before triage could put it back: %s may still hold %q where it held %q: check it",
		d.Tab, who, d.Column, d.Ours, d.Before)
}

// OK reports whether every edit was written and no other row was damaged.
func (r ApplyResult) OK() bool {
	return len(r.Conflicts) == 0 && len(r.Missing) == 0 && len(r.Damaged) == 0
}

// Summary says in one line what happened, for a toast or a CLI line.
func (r ApplyResult) Summary() string {
	s := fmt.Sprintf("%d written", len(r.Applied))
	if n := len(r.Conflicts); n > 0 {
		s += fmt.Sprintf(", %d conflict", n)
		if n > 1 {
			s += "s"
		}
		s += " (changed by someone else; refresh to see)"
	}
	if n := len(r.Missing); n > 0 {
		s += fmt.Sprintf(", %d no longer in the sheet", n)
	}
	if n := len(r.Damaged); n > 0 {
		s += fmt.Sprintf(", %d cell", n)
		if n > 1 {
			s += "s"
		}
		s += " triage could not put back (check them: " + r.Damaged[0].String() + ")"
	}
	if n := len(r.Recovered); n > 0 {
		s += fmt.Sprintf("; first put back %d cell", n)
		if n > 1 {
			s += "s"
		}
		s += " an unfinished write of " + r.Recovered[0].Writer + " had left on other rows"
	}
	return s
}

// SetStatus builds the edit that changes a record's status. The value written is the tab's
// own spelling of the status (a dropdown's "Read" for "read"), so it passes the validation.
func SetStatus(t *Table, r *Record, status string) Edit {
	return Edit{Tab: t.Config.Name, ID: r.ID,
		Expect: map[Field]string{FStatus: t.Get(r, FStatus)},
		Set:    map[Field]string{FStatus: t.StatusValue(status)}}
}

// ClearError builds the edit a person makes to release a sticky error: a rejected dead
// letter goes back to dead; an error job goes back to pending with its claim (claimedBy,
// claimedAt) blanked and updatedAt set to now. The error text stays: it is why the row
// stopped, which whoever looks at it next wants to know; the next attempt writes its own
// outcome over it. ok is false when the record is not sticky.
func ClearError(t *Table, r *Record, now time.Time) (Edit, bool) {
	if !t.Sticky(r) {
		return Edit{}, false
	}
	e := Edit{Tab: t.Config.Name, ID: r.ID, Expect: map[Field]string{}, Set: map[Field]string{}}
	put := func(f Field, v string) {
		if t.Header.Has(f) {
			e.Expect[f] = t.Get(r, f)
			e.Set[f] = v
		}
	}
	switch t.Config.Role {
	case RoleDeadLetter:
		put(FStatus, t.StatusValue(StatusDead))
	case RoleQueue:
		put(FStatus, t.StatusValue(StatusPending))
		// A pending job has no worker: the failed worker's claim goes with the error.
		put(FClaimedBy, "")
		put(FClaimedAt, "")
		put(FUpdatedAt, FormatTime(now))
	}
	return e, true
}

// Requeue builds the edit that returns a stale claim to pending, releasing the claim
// (claimedBy and claimedAt blanked). It expects them unchanged, so a worker that re-claimed
// or finished the row meanwhile wins.
func Requeue(t *Table, r *Record, now time.Time) (Edit, bool) {
	if !t.Stale(r, now) {
		return Edit{}, false
	}
	e := Edit{Tab: t.Config.Name, ID: r.ID, Expect: map[Field]string{}, Set: map[Field]string{}}
	for _, f := range []Field{FClaimedBy, FClaimedAt} {
		if t.Header.Has(f) {
			e.Expect[f] = t.Get(r, f)
		}
	}
	e.Expect[FStatus] = t.Get(r, FStatus)
	e.Set[FStatus] = t.StatusValue(StatusPending)
	// A pending job has no worker: the claim is released, not just relabelled.
	for _, f := range []Field{FClaimedBy, FClaimedAt} {
		if t.Header.Has(f) {
			e.Set[f] = ""
		}
	}
	if t.Header.Has(FUpdatedAt) {
		e.Expect[FUpdatedAt] = t.Get(r, FUpdatedAt)
		e.Set[FUpdatedAt] = FormatTime(now)
	}
	return e, true
}

// ErrMayHaveLanded marks a store's Apply error after which its write may have landed (or did):
// the edits' outcomes are unknown until the rows are read again. An Apply error without it
// wrote nothing.
var ErrMayHaveLanded = errors.New("a write of this call may have landed")
