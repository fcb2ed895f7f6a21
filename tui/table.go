package tui

import (
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/triage-dev/triage/model"
)

// The main table is written here rather than with bubbles/table: that one renders every row
// it holds on each change, which at 100,000 rows costs milliseconds per keypress. This one
// renders the header and the rows on screen, nothing else, so a cursor move costs the same at
// 100 rows and at 100,000 (BenchmarkCursorMove1k / 100k).

// paint applies a style, or nothing at all with NO_COLOR (not even a reset sequence).
func (s *Styles) paint(st lipgloss.Style, text string) string {
	if s.NoColor || text == "" {
		return text
	}
	return st.Render(text)
}

// layoutKey is what a tab's column widths depend on besides its data: the width, how wide an
// age reads now, and the sorted column (its title has room for the arrow).
type layoutKey struct {
	width, ageW, sorted int
	wide                bool
}

// relayout recomputes column widths when something they depend on changed.
func (ts *tabState) relayout(c *common, w int) {
	if ts.data == nil {
		return
	}
	k := layoutKey{w, ts.data.ageWidth(c.now()), ts.sort.col, ts.wide}
	if ts.widths != nil && ts.laidOut == k {
		return
	}
	if ts.wide {
		ts.widths = ts.wideWidths(c)
		ts.laidOut = k
		return
	}
	cols := ts.data.cols
	nat := append([]int(nil), ts.data.natural...)
	for i := range cols {
		col := &cols[i]
		if col.kind == kindAge {
			nat[i] = min(col.max, max(textWidth(col.title), k.ageW))
		}
	}
	if i := ts.sort.col; i >= 0 && i < len(cols) && !cols[i].flex() {
		// The sorted column keeps room for its title and arrow (" ▲").
		cols = slices.Clone(cols)
		tw := textWidth(cols[i].title) + 2
		nat[i] = max(nat[i], tw)
		cols[i].min = max(cols[i].min, tw)
	}
	ts.widths = layout(cols, nat, w)
	ts.laidOut = k
}

// tableLines renders the table (column header + rows) as exactly h lines of w cells.
func (ts *tabState) tableLines(c *common, w, h int) []string {
	lines := make([]string, 0, h)
	if h <= 0 {
		return lines
	}
	ts.relayout(c, w)
	full := w
	if ts.wide {
		full = max(w, ts.wideWidth())
		ts.xoff = max(0, min(ts.xoff, full-w))
	}
	lines = append(lines, ts.sideways(ts.headerLine(c, full), w))
	rows := h - 1
	ts.scrollTo(rows)
	if len(ts.visible) == 0 {
		msg := "No rows in " + cellLine(ts.name()) + "."
		if strings.TrimSpace(ts.filter.query) != "" {
			msg = "No rows match " + cellLine(ts.filter.query) + "."
			if k := firstKey(c.keys.Clear); k != "" {
				msg = "No rows match " + cellLine(ts.filter.query) + " (" + k + " clears the filter)."
			}
		}
		lines = append(lines, c.styles.paint(c.styles.Muted, fit("  "+msg, w)))
	}
	end := min(ts.offset+rows, len(ts.visible))
	var b strings.Builder
	for i := ts.offset; i < end; i++ {
		b.Reset()
		ts.rowLine(c, &b, ts.visible[i], i == ts.cursor, full)
		lines = append(lines, ts.sideways(b.String(), w))
	}
	blank := strings.Repeat(" ", w)
	for len(lines) < h {
		lines = append(lines, blank)
	}
	return lines
}

// headerLine is the column titles; the sorted column's carries ▲ or ▼ (^ and v under
// TERM=dumb, through asciiChrome).
func (ts *tabState) headerLine(c *common, w int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", gutterWidth))
	first := true
	cols := ts.cols()
	for i := range cols {
		col := &cols[i]
		cw := ts.widths[i]
		if cw == 0 {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		title := col.title
		if ts.sortedTitle() == col.title {
			title = truncate(title, cw-2) + " " + ts.sort.arrow()
		}
		if col.kind == kindNumber || col.kind == kindAge || col.kind == kindTime {
			b.WriteString(fitRight(title, cw))
		} else {
			b.WriteString(fit(title, cw))
		}
	}
	return c.styles.paint(c.styles.TableHeader, fit(b.String(), w))
}

// rowLine renders one record. The cursor row is one styled span (its highlight wins over
// status colors); other rows color only the gutter marks, the status and stale ages.
func (ts *tabState) rowLine(c *common, b *strings.Builder, ri int32, cursor bool, w int) {
	st := c.styles
	t := ts.data.table
	r := &t.Records[ri]
	now := c.now()
	plain := cursor || st.NoColor

	gutter := ts.gutter(st, r, ri, cursor, plain)
	var line strings.Builder
	out := b
	if cursor && !st.NoColor {
		out = &line // collected plain, styled as one span below
	}
	for _, g := range gutter {
		out.WriteString(g)
	}
	used := gutterWidth
	first := true
	cols := ts.cols()
	for i := range cols {
		col := &cols[i]
		cw := ts.widths[i]
		if cw == 0 {
			continue
		}
		if !first {
			out.WriteByte(' ')
			used++
		}
		first = false
		used += cw
		out.WriteString(cellSpan(st, t, r, col, cw, now, plain))
	}
	if used < w {
		out.WriteString(strings.Repeat(" ", w-used))
	}
	if out == &line {
		b.WriteString(st.rows.cursor.wrap(line.String()))
	}
}

// gutter is a row's gutter: cursor (NO_COLOR only; with color the highlight shows it), mark,
// problem; colored unless plain.
func (ts *tabState) gutter(st *Styles, r *model.Record, ri int32, cursor, plain bool) [gutterWidth]string {
	gutter := [gutterWidth]string{" ", " ", " "}
	if cursor && st.NoColor {
		gutter[0] = ">"
	}
	if ts.marked[ri] {
		gutter[1] = "*"
		if !plain {
			gutter[1] = st.rows.mark.wrap("*")
		}
	}
	if len(r.Problems) > 0 {
		gutter[2] = "!"
		if !plain {
			gutter[2] = st.rows.problem.wrap("!")
		}
	}
	return gutter
}

// cellSpan is one cell fitted to width cw (numbers, ages and times right-aligned); unless
// plain, a status is colored by its status and a stale age as stale.
func cellSpan(st *Styles, t *model.Table, r *model.Record, col *column, cw int, now time.Time, plain bool) string {
	cell := fitCell(col, cellText(t, r, col, now), cw)
	if plain {
		return cell
	}
	switch {
	case col.kind == kindStatus:
		return st.statusSpan(t.Config.Role, r.Status).wrap(cell)
	case col.kind == kindAge && t.Stale(r, now):
		return st.rows.stale.wrap(cell)
	}
	return cell
}

// statusCountsLine summarises a table's statuses ("3 rejected · 12 dead · 1 delivered"),
// what needs a person first, because at 80 columns the tab bar keeps only the first one or
// two: the queue's stale claims (a subset of claimed), the sticky errors (rejected dead
// letters, error jobs), then the waiting status (new, dead, pending), then the rest in the
// tab's status order, then any status outside the list. limit caps how many are named (0 =
// all).
func statusCountsLine(t *model.Table, counts map[string]int, limit, stale int) string {
	var parts []string
	if stale > 0 && t.Config.Role == model.RoleQueue {
		parts = append(parts, itoa(stale)+" stale")
	}
	seen := map[string]bool{}
	add := func(s string) {
		if seen[s] || counts[s] == 0 {
			return
		}
		seen[s] = true
		parts = append(parts, itoa(counts[s])+" "+cellLine(s))
	}
	for _, s := range attentionFirst(t.Config.Role) {
		add(s)
	}
	for _, s := range t.Statuses {
		add(model.NormStatus(t.Config.Role, s))
	}
	var extra []string
	for s := range counts {
		if !seen[s] {
			extra = append(extra, s)
		}
	}
	sort.Strings(extra)
	for _, s := range extra {
		add(s)
	}
	if limit > 0 && len(parts) > limit {
		parts = parts[:limit]
	}
	return strings.Join(parts, " · ")
}

// attentionFirst is the statuses a tab's counts name first: the sticky error, then the
// waiting status (blank cells read as it).
func attentionFirst(r model.Role) []string {
	switch r {
	case model.RoleDeadLetter:
		return []string{model.StatusRejected, model.NormStatus(r, "")}
	case model.RoleQueue:
		return []string{model.StatusError, model.NormStatus(r, "")}
	}
	return []string{model.NormStatus(r, "")}
}
