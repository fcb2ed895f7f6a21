package tui

import (
	"strconv"
	"time"

	"github.com/triage-dev/triage/model"
)

// colKind says how a column turns a record into text.
type colKind uint8

const (
	kindText      colKind = iota // the cell, on one line
	kindFirstLine                // the first line of the cell (messages)
	kindStatus                   // the record's normalised status, styled by meaning
	kindAge                      // the record's parsed time, as an age
	kindNumber                   // the cell, right-aligned
	kindTime                     // a time cell other than the record's own time, as an age
)

// column is one table column of a role. Widths are in cells: a column starts at its natural
// width (the widest value, within min..max) and gives way down to min when the terminal is
// narrow; the flex column takes whatever is left.
type column struct {
	title    string
	field    model.Field
	kind     colKind
	min, max int
	flex     bool
	// drop orders the columns to hide when even their minimum widths don't fit (1 first).
	drop int
}

// roleColumns lists the columns a role shows, in order. Columns the tab lacks are left out.
func roleColumns(t *model.Table) []column {
	var all []column
	switch t.Config.Role {
	case model.RoleInbox:
		all = []column{
			{title: "AGE", field: model.FTimestamp, kind: kindAge, min: 3, max: 6, drop: 3},
			{title: "NAME", field: model.FName, kind: kindText, min: 6, max: 18, drop: 4},
			{title: "EMAIL", field: model.FEmail, kind: kindText, min: 8, max: 26, drop: 2},
			{title: "STATUS", field: model.FStatus, kind: kindStatus, min: 4, max: 8},
			{title: "MESSAGE", field: model.FMessage, kind: kindFirstLine, min: 12, flex: true},
		}
	case model.RoleDeadLetter:
		all = []column{
			{title: "SOURCE", field: model.FSource, kind: kindText, min: 6, max: 14, drop: 4},
			{title: "URL", field: model.FURL, kind: kindText, min: 10, max: 36, drop: 3},
			{title: "ERROR", field: model.FError, kind: kindFirstLine, min: 10, flex: true},
			{title: "TRIES", field: model.FAttempts, kind: kindNumber, min: 3, max: 5, drop: 1},
			{title: "STATUS", field: model.FStatus, kind: kindStatus, min: 4, max: 9},
			{title: "AGE", field: model.FTimestamp, kind: kindAge, min: 3, max: 6, drop: 2},
		}
	case model.RoleQueue:
		all = []column{
			{title: "ID", field: model.FID, kind: kindText, min: 8, max: 14, drop: 7},
			{title: "TYPE", field: model.FType, kind: kindText, min: 6, max: 12, drop: 5},
			// Columns that are no use cut short keep their width as min: they are hidden (in
			// drop order) rather than squeezed.
			{title: "PAYLOAD", field: model.FPayload, kind: kindFirstLine, min: 24, max: 24, drop: 1},
			{title: "STATUS", field: model.FStatus, kind: kindStatus, min: 7, max: 9},
			{title: "WORKER", field: model.FClaimedBy, kind: kindText, min: 8, max: 14, drop: 4},
			// A stale claim reads "stale 2h": the word survives NO_COLOR and TERM=dumb.
			{title: "CLAIMED", field: model.FClaimedAt, kind: kindAge, min: 9, max: 9, drop: 6},
			{title: "LAST ERROR", field: model.FLastError, kind: kindFirstLine, min: 10, flex: true},
			{title: "UPDATED", field: model.FUpdatedAt, kind: kindTime, min: 7, max: 7, drop: 2},
			{title: "TRIES", field: model.FAttempts, kind: kindNumber, min: 5, max: 5, drop: 3},
		}
	}
	cols := all[:0:0]
	for _, c := range all {
		if c.kind == kindStatus || t.Header.Has(c.field) {
			cols = append(cols, c)
		}
	}
	return cols
}

// cellText is what a column shows for a record, sanitised, before fitting.
func cellText(t *model.Table, r *model.Record, c *column, now time.Time) string {
	switch c.kind {
	case kindStatus:
		return cellLine(r.Status)
	case kindAge:
		a := age(now, inZone(r.Time, t.Location))
		if t.Stale(r, now) {
			// A stale claim needs a person; the word survives NO_COLOR.
			a = "stale " + a
		}
		return a
	case kindTime:
		if tm, ok := model.ParseTime(t.Get(r, c.field), t.Location); ok {
			return age(now, inZone(tm, t.Location))
		}
		return cellLine(t.Get(r, c.field))
	case kindFirstLine:
		return firstLine(t.Get(r, c.field))
	}
	return cellLine(t.Get(r, c.field))
}

// naturalWidths measures each column over every record, once per load (in the load Cmd, off
// the UI goroutine).
func naturalWidths(t *model.Table, cols []column) []int {
	nat := make([]int, len(cols))
	for i, c := range cols {
		w := textWidth(c.title)
		switch c.kind {
		case kindAge, kindTime:
			// Room for the longest age (and "stale 12m" for claims).
			w = max(w, c.max)
		case kindFirstLine:
			// flex columns take the rest; measuring them is wasted work.
			if c.flex {
				break
			}
			fallthrough
		default:
			for ri := range t.Records {
				if w >= c.max {
					break
				}
				var s string
				if c.kind == kindStatus {
					s = t.Records[ri].Status
				} else {
					s = t.Get(&t.Records[ri], c.field)
				}
				if vw := textWidth(cellLine(s)); vw > w {
					w = vw
				}
			}
		}
		if c.max > 0 && w > c.max {
			w = c.max
		}
		nat[i] = max(w, c.min)
	}
	return nat
}

// widen grows the natural widths of the columns a changed record no longer fits (a status
// or a worker longer than any the load measured). Widths never shrink until the next load:
// measuring every row again per edit would cost O(rows).
func (d *tabData) widen(r *model.Record) (grew bool) {
	for i, c := range d.cols {
		if c.flex || c.kind == kindAge || c.kind == kindTime || (c.max > 0 && d.natural[i] >= c.max) {
			continue
		}
		var s string
		if c.kind == kindStatus {
			s = r.Status
		} else {
			s = d.table.Get(r, c.field)
		}
		w := textWidth(cellLine(s))
		if c.max > 0 {
			w = min(w, c.max)
		}
		if w > d.natural[i] {
			d.natural[i], grew = w, true
		}
	}
	return grew
}

// gutterWidth is the cursor / mark / problem marker cells left of the first column.
const gutterWidth = 3

// layout fits the columns into a width: natural widths where they fit, shrunk toward their
// minimum (widest first) where they don't, low-priority columns hidden as a last resort. It
// returns the width of each column, 0 for a hidden one. The flex column gets at least a
// third of the line so a message stays readable at 80 columns.
func layout(cols []column, natural []int, width int) []int {
	ws := make([]int, len(cols))
	hidden := make([]bool, len(cols))
	for {
		visible, flex := shownWidths(cols, natural, hidden, ws)
		if visible == 0 {
			return ws
		}
		avail := width - gutterWidth - (visible - 1)
		flexMin := max(cols[flex].min, avail/3)
		used := 0
		for i := range cols {
			if !hidden[i] && i != flex {
				used += ws[i]
			}
		}
		used = shrinkTo(cols, hidden, ws, flex, used, avail-flexMin)
		if used+cols[flex].min <= avail {
			ws[flex] = avail - used
			return ws
		}
		// Still too wide: hide the next droppable column and start over.
		drop := nextDrop(cols, hidden)
		if drop < 0 {
			ws[flex] = max(1, avail-used)
			return ws
		}
		hidden[drop] = true
	}
}

// shownWidths sets every shown column to its natural width (hidden ones to 0); it returns
// how many are shown and which one flexes: the first flex column, else the last shown one,
// which takes the slack.
func shownWidths(cols []column, natural []int, hidden []bool, ws []int) (visible, flex int) {
	flex = -1
	for i, c := range cols {
		if hidden[i] {
			ws[i] = 0
			continue
		}
		visible++
		if c.flex && flex < 0 {
			flex = i
		}
		ws[i] = natural[i]
	}
	if flex < 0 {
		for i := len(cols) - 1; i >= 0; i-- {
			if !hidden[i] {
				flex = i
				break
			}
		}
	}
	return visible, flex
}

// shrinkTo narrows the shown columns other than flex, one cell at a time from the one with
// the most room above its minimum, until they use at most limit cells or none can shrink. It
// returns the width they use.
func shrinkTo(cols []column, hidden []bool, ws []int, flex, used, limit int) int {
	for used > limit {
		best, slack := -1, 0
		for i, c := range cols {
			if hidden[i] || i == flex {
				continue
			}
			if s := ws[i] - c.min; s > slack {
				best, slack = i, s
			}
		}
		if best < 0 {
			break
		}
		ws[best]--
		used--
	}
	return used
}

// nextDrop is the shown column to hide next (lowest drop rank above 0), -1 if none can go.
func nextDrop(cols []column, hidden []bool) int {
	drop, rank := -1, 0
	for i, c := range cols {
		if !hidden[i] && c.drop > 0 && (drop < 0 || c.drop < rank) {
			drop, rank = i, c.drop
		}
	}
	return drop
}

// itoa avoids fmt in the per-row path.
func itoa(n int) string { return strconv.Itoa(n) }
