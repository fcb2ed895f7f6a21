// The dead-letter tab's group view: the rows waiting for replay counted by source × kind of
// error, biggest first, so the first question of an incident ("what broke, where, how
// many?") is one key away, and enter turns a group into the table's filter, so replaying
// every crm 503 is three keys (c, enter on the line, A).

package tui

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// groupRow is one group: the dead rows of one source whose error is of one kind.
type groupRow struct {
	source string // the source cell, trimmed, as the sheet has it (sanitised when drawn)
	kind   string // model.ErrorKind of the error cell: "503", "timeout", …; "" when it is empty
	count  int
	sample string // the error text of the group's first row in display order (the newest)
}

// same reports whether two groups are the same source × kind (their counts may differ).
func (g groupRow) same(o groupRow) bool { return g.source == o.source && g.kind == o.kind }

// holds reports whether a record belongs to the group: waiting for replay (blank or dead
// status; model normalises a blank one to dead), of that source, with an error of that kind.
func (g groupRow) holds(t *model.Table, r *model.Record) bool {
	return r.Status == model.StatusDead && strings.TrimSpace(t.Get(r, model.FSource)) == g.source &&
		model.ErrorKind(t.Get(r, model.FError)) == g.kind
}

// countGroups counts the dead rows of t (walked in display order, so each group's sample is
// its newest error) by source × kind, biggest first; ties by source, then kind. It reads the
// loaded table only: no I/O.
func countGroups(t *model.Table, order []int32) []groupRow {
	at := map[[2]string]int{}
	var out []groupRow
	for _, ri := range order {
		r := &t.Records[ri]
		if r.Status != model.StatusDead {
			continue
		}
		errText := strings.TrimSpace(t.Get(r, model.FError))
		k := [2]string{strings.TrimSpace(t.Get(r, model.FSource)), model.ErrorKind(errText)}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, groupRow{source: k[0], kind: k[1], sample: errText})
		}
		out[i].count++
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.count != y.count {
			return x.count > y.count
		}
		if x.source != y.source {
			return x.source < y.source
		}
		return x.kind < y.kind
	})
	return out
}

// groupsView is the group view of one dead-letter tab. It is counted from the loaded table
// and counted again when that changes (a refresh, a write): data and gen say what it was
// counted from.
type groupsView struct {
	c      *common
	tab    string
	data   *tabData
	gen    int
	rows   []groupRow
	total  int // dead rows, all groups together
	cursor int
	offset int
	listH  int // how many groups fit on screen (set by the parent: groupsListHeight)
}

// newGroups counts the groups of tab ts.
func newGroups(c *common, ts *tabState, gen int) *groupsView {
	g := &groupsView{c: c, tab: ts.name()}
	g.recount(ts.data, gen)
	return g
}

// recount counts again from d, keeping the cursor on the same source × kind when it is
// still there.
func (g *groupsView) recount(d *tabData, gen int) {
	var cur groupRow
	had := g.cursor >= 0 && g.cursor < len(g.rows)
	if had {
		cur = g.rows[g.cursor]
	}
	g.data, g.gen = d, gen
	g.rows = countGroups(d.table, d.order)
	g.total = 0
	for _, r := range g.rows {
		g.total += r.count
	}
	if had {
		for i, r := range g.rows {
			if r.same(cur) {
				g.cursor = i
				return
			}
		}
	}
	g.cursor = max(0, min(g.cursor, len(g.rows)-1))
}

// position is the status bar's counter in the group view: "group 3/17", as the table's is
// "3/25".
func (g *groupsView) position() string {
	if len(g.rows) == 0 {
		return "no groups"
	}
	return "group " + itoa(g.cursor+1) + "/" + itoa(len(g.rows))
}

// listHeight is how many groups fit in a body of h lines: less the title, the column
// header and the hint line.
func groupsListHeight(h int) int { return max(1, h-3) }

// pickGroupAction: enter on a group; the root sets the table's filter to it.
type pickGroupAction struct{ g groupRow }

func (pickGroupAction) isAction() {}

// Update moves the cursor (listH groups fit on screen), or returns pickGroupAction (enter) or
// a keyAction: back, and help and refresh as in the table.
func (g *groupsView) Update(msg tea.Msg) (*groupsView, action) {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return g, nil
	}
	a := g.onKey(km, g.listH)
	return g, a
}

// onKey handles a key of the group view.
func (g *groupsView) onKey(msg tea.KeyPressMsg, listH int) action {
	k := g.c.keys
	switch {
	case key.Matches(msg, k.Help):
		return keyAction{v: vHelp}
	case key.Matches(msg, k.Refresh):
		return keyAction{v: vRefresh}
	case key.Matches(msg, k.GroupsFilter):
		if g.cursor < len(g.rows) {
			return pickGroupAction{g: g.rows[g.cursor]}
		}
		return nil
	case key.Matches(msg, k.Back, k.Clear, k.Quit, k.Groups):
		return keyAction{v: vCloseGroups}
	case key.Matches(msg, k.Down):
		g.cursor++
	case key.Matches(msg, k.Up):
		g.cursor--
	case key.Matches(msg, k.Top):
		g.cursor = 0
	case key.Matches(msg, k.Bottom):
		g.cursor = len(g.rows) - 1
	case key.Matches(msg, k.PageDown, k.HalfDown):
		g.cursor += max(1, listH-1)
	case key.Matches(msg, k.PageUp, k.HalfUp):
		g.cursor -= max(1, listH-1)
	}
	g.scroll(listH)
	return nil
}

// scroll keeps the cursor inside the list and on screen.
func (g *groupsView) scroll(listH int) {
	g.cursor = max(0, min(g.cursor, len(g.rows)-1))
	if g.cursor < g.offset {
		g.offset = g.cursor
	}
	if g.cursor >= g.offset+listH {
		g.offset = g.cursor - listH + 1
	}
	g.offset = max(0, min(g.offset, len(g.rows)-listH))
}

// kindLabel is how a kind reads in the view: "none" for rows without an error text.
func kindLabel(kind string) string {
	if kind == "" {
		return "none"
	}
	return kind
}

// groupCols are the widths of the view's columns at a width.
type groupCols struct{ source, kind, count, bar, sample int }

// columns fits SOURCE, KIND, COUNT, the share bar and the sample error into w cells: the
// sample takes what is left, the source gives way first (to 8 cells) when that is too little.
func (g *groupsView) columns(w int) groupCols {
	c := groupCols{source: len("SOURCE"), kind: len("KIND"), count: len("COUNT"), bar: 10}
	for _, r := range g.rows {
		c.source = max(c.source, textWidth(cellLine(r.source)))
		c.kind = max(c.kind, textWidth(cellLine(kindLabel(r.kind))))
		c.count = max(c.count, len(itoa(r.count)))
	}
	c.source = min(c.source, 24)
	c.kind = min(c.kind, 10)
	if w < 80 {
		c.bar = 6
	}
	// gutter 2, four single spaces, the bar, a space and "100%"
	fixed := func() int { return 2 + c.source + 1 + c.kind + 1 + c.count + 1 + c.bar + 1 + 4 + 1 }
	if rest := w - fixed(); rest < 16 {
		c.source = max(8, c.source-(16-rest))
	}
	c.sample = max(0, w-fixed())
	return c
}

// lines draws the view as exactly h lines of w cells.
func (g *groupsView) lines(w, h int) []string {
	st := g.c.styles
	listH := groupsListHeight(h)
	groups := fmt.Sprintf("%d %s", len(g.rows), words.Plural(len(g.rows), "group", "groups"))
	title := firstFitting(w,
		fmt.Sprintf(" %s waiting for replay in %s, in %s by source × kind of error", countRows(g.total), cellLine(g.tab), groups),
		fmt.Sprintf(" %s waiting for replay: %s by source × error", countRows(g.total), groups),
		fmt.Sprintf(" %s waiting: %s by source × error", countRows(g.total), groups))
	out := []string{st.paint(st.Section, fit(title, w))}
	c := g.columns(w)
	head := "  " + fit("SOURCE", c.source) + " " + fit("KIND", c.kind) + " " + fitRight("COUNT", c.count) + " " +
		fit("SHARE", c.bar+5) + " " + fit("SAMPLE ERROR", c.sample)
	out = append(out, st.paint(st.TableHeader, fit(head, w)))
	if len(g.rows) == 0 {
		out = append(out, st.paint(st.Muted, fit("  No rows are waiting for replay (blank or dead status).", w)))
	}
	off := max(0, min(g.offset, len(g.rows)-listH))
	end := min(len(g.rows), off+listH)
	for i := off; i < end; i++ {
		out = append(out, g.rowLine(g.rows[i], i == g.cursor, c, w))
	}
	for len(out) < h-1 {
		out = append(out, strings.Repeat(" ", w))
	}
	out = append(out, st.paint(st.Muted, fit(g.hint(off, end, w), w)))
	return padLines(out, w, h)
}

// rowLine is one group: every cell sanitised and cut to its column.
func (g *groupsView) rowLine(r groupRow, cursor bool, c groupCols, w int) string {
	st := g.c.styles
	gutter := "  "
	if cursor && st.NoColor {
		gutter = "> "
	}
	src := cellLine(r.source)
	if src == "" {
		src = "(blank)"
	}
	filled := 0
	if g.total > 0 {
		filled = max(1, (r.count*c.bar+g.total/2)/g.total)
	}
	bar := strings.Repeat("█", min(filled, c.bar)) + strings.Repeat("░", max(0, c.bar-filled))
	pct := 0
	if g.total > 0 {
		pct = (r.count*100 + g.total/2) / g.total
	}
	line := gutter + fit(src, c.source) + " " + fit(cellLine(kindLabel(r.kind)), c.kind) + " " + fitRight(itoa(r.count), c.count) + " " +
		bar + " " + fitRight(itoa(pct)+"%", 4) + " " + fit(cellLine(r.sample), c.sample)
	line = fit(line, w)
	if cursor && !st.NoColor {
		return st.rows.cursor.wrap(line)
	}
	return line
}

// hint is the view's last line: where the list is when there are more groups than fit, and
// what enter does, shorter until it fits w (the footer has the way back). Keys are the bound
// ones.
func (g *groupsView) hint(off, end, w int) string {
	k := g.c.keys
	pos := ""
	if len(g.rows) > end-off {
		pos = fmt.Sprintf("groups %d-%d of %d", off+1, end, len(g.rows))
		if sh := k.scrollHint(); sh != "" {
			pos += " (" + sh + ")"
		}
		pos += " · "
	}
	if len(g.rows) == 0 {
		return " " + strings.TrimSuffix(pos, " · ")
	}
	e := firstKey(k.GroupsFilter)
	long, short := e+" shows a group in the table", e+" filters to it"
	if a := firstKey(k.ReplayAll); a != "" && g.c.offers(k.ReplayAll) {
		long += ", then " + a + " replays it"
		short += ", " + a + " replays it"
	}
	return firstFitting(w, " "+pos+long, " "+pos+short, " "+pos+e+" filters")
}

// firstFitting is the first text that fits w cells, else the last one.
func firstFitting(w int, texts ...string) string {
	for _, s := range texts {
		if textWidth(s) <= w {
			return s
		}
	}
	return texts[len(texts)-1]
}

// groupQuery is the filter that shows exactly a group's rows, and whether it does (checked
// by running it over the table, with the same matcher the table filters with). It uses only
// quote-free `field:value` terms: status:dead, kind:K (!kind: for rows without an error),
// source:S. A source the filter can't spell whole (a space, a quote, a colon) is cut to its
// longest safe start; a field value matches other sources that start with it (or contain
// it), so each other source the terms would also show is excluded with !source:X where that
// keeps every row of the group. When no spelling is exact, the caller says so.
func groupQuery(d *tabData, g groupRow) (string, bool) {
	terms := []string{"status:" + model.StatusDead}
	if g.kind == "" {
		terms = append(terms, "!kind:")
	} else {
		terms = append(terms, "kind:"+g.kind)
	}
	if v := filterSafe(g.source); v != "" {
		terms = append(terms, "source:"+v)
	}
	t := d.table
	run := func(terms []string) (shown []int32, inGroup int, others []string) {
		shown = d.match(model.ParseFilter(strings.Join(terms, " ")), d.order)
		seen := map[string]bool{}
		for _, ri := range shown {
			r := &t.Records[ri]
			if g.holds(t, r) {
				inGroup++
				continue
			}
			if s := strings.TrimSpace(t.Get(r, model.FSource)); s != g.source && !seen[s] {
				seen[s] = true
				others = append(others, s)
			}
		}
		sort.Strings(others)
		return shown, inGroup, others
	}
	_, _, others := run(terms)
	const maxExclusions = 20
	for i, s := range others {
		if i == maxExclusions {
			break
		}
		v := filterSafe(s)
		if v == "" {
			continue
		}
		try := append(append([]string(nil), terms...), "!source:"+v)
		if _, n, _ := run(try); n == g.count {
			terms = try
		}
	}
	shown, in, _ := run(terms)
	return strings.Join(terms, " "), in == g.count && len(shown) == g.count
}

// filterSafe is the longest start of a source name the filter reads as one plain value:
// letters, digits and - _ . / @ + (no space, quote, colon, | or !, which the filter
// language gives meanings to).
func filterSafe(s string) string {
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_./@+", r) {
			return s[:i]
		}
	}
	return s
}

// openGroups answers the groups key on the dead-letter tab.
func (m *Model) openGroups() tea.Cmd {
	ts := m.tabs.current()
	if ts == nil || ts.data == nil {
		return nil
	}
	if ts.cfg.Role != model.RoleDeadLetter {
		return m.toasts.sayf(toastInfo, "groups are for dead letters (the %s tab)", model.DefaultTabName(model.RoleDeadLetter))
	}
	m.groups = newGroups(m.c, ts, m.load.dataGen)
	m.groups.listH = groupsListHeight(m.geo.bodyH)
	m.groups.scroll(m.groups.listH)
	return nil
}

// pickGroup sets the tab's filter to a group and goes back to the table.
func (m *Model) pickGroup(g groupRow) tea.Cmd {
	ts := m.tabs.named(m.groups.tab)
	m.groups = nil
	if ts == nil || ts.data == nil {
		return nil
	}
	q, exact := groupQuery(ts.data, g)
	ts.applyFilter(q)
	m.prompt.input.SetValue(q)
	ts.setCursor(0, m.geo.tableH)
	name := truncate(cellLine(g.source), 20) + " × " + kindLabel(g.kind)
	if !exact {
		shown := "more rows"
		if !ts.waiting() {
			shown = countRows(len(ts.visible))
		}
		return m.toasts.sayf(toastError, "the filter can't spell the source %s exactly: it shows %s, the group has %d; mark the group's rows before acting on them",
			truncate(cellLine(g.source), 20), shown, g.count)
	}
	// An exact filter shows the group's rows: their count is the group's, also while the
	// tab's filter text is still being built (the table shows every row until it lands).
	s := fmt.Sprintf("showing %s: %s", name, countRows(g.count))
	if a := firstKey(m.c.keys.ReplayAll); a != "" && m.c.offers(m.c.keys.ReplayAll) {
		s += " · " + a + " replays them (a dry run first)"
	}
	return m.toasts.sayf(toastInfo, "%s", s)
}

// syncGroups counts the open group view again when its tab's rows changed (a refresh
// replaced them, a write changed them), and closes it when the tab is gone or broken.
func (m *Model) syncGroups() {
	if m.groups == nil {
		return
	}
	ts := m.tabs.named(m.groups.tab)
	if ts == nil || ts.data == nil {
		m.groups = nil
		return
	}
	if ts.data != m.groups.data || m.load.dataGen != m.groups.gen {
		m.groups.recount(ts.data, m.load.dataGen)
	}
	m.groups.listH = groupsListHeight(m.geo.bodyH)
	m.groups.scroll(m.groups.listH)
}
