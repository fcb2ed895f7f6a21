// Sorting a tab by a column, as in k9s and gh-dash: the sort key (S) opens a picker of the
// tab's columns and "sheet order"; picking the sorted column again flips its direction.

package tui

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// sheetOrder is sortState.col for the rows as the sheet holds them.
const sheetOrder = -1

// sheetOrderOption is the picker's entry for the sheet's own row order.
const sheetOrderOption = "sheet order"

// sortState is how a tab orders its rows: by one column (col, an index into the tab's
// columns) ascending or descending, or in sheet order (col = sheetOrder).
//
// Ascending means what the column shows goes up: text A to Z (case-insensitive), numbers
// small to big, statuses in the tab's status order, ages young to old (so AGE ▲ is newest
// first, the inbox's default). Blank cells come last either way, in sheet order. Rows with
// equal keys keep sheet order; for ages, the later row of the same instant counts as newer
// (as prepare does). Sorts are per tab and re-applied after a refresh; a write doesn't move
// rows (they would jump under the cursor) until the next load.
type sortState struct {
	col  int
	desc bool
}

// arrow is the header's mark for the sorted column (asciiChrome makes it ^ or v).
func (s sortState) arrow() string {
	if s.desc {
		return "▼"
	}
	return "▲"
}

// defaultSort is the order prepare builds: newest first (AGE ▲) where the tab has its own
// time column and isn't a queue, else sheet order.
func defaultSort(d *tabData) sortState {
	if d.table.Config.Role != model.RoleQueue {
		for i := range d.cols {
			if d.cols[i].kind == kindAge {
				return sortState{col: i}
			}
		}
	}
	return sortState{col: sheetOrder}
}

// sortItem is one record's sort key: compared by f, then k, then s, then k2 (each reversed
// for a descending sort), then by record index (sheet order) as the final, stable, tie-break.
type sortItem struct {
	ri    int32
	blank bool
	f     float64
	k     int64
	k2    int64
	s     string
}

// sortKey computes the key of record ri for column c.
func sortKey(t *model.Table, c *column, ri int32, rank map[string]int64) sortItem {
	r := &t.Records[ri]
	it := sortItem{ri: ri}
	switch c.kind {
	case kindAge:
		if r.Time.IsZero() {
			it.blank = true
		}
		// Young first: the newer time, then the later row, first.
		it.k, it.k2 = -r.Time.UnixNano(), -int64(ri)
	case kindTime:
		tm, ok := model.ParseTime(t.Get(r, c.field), t.Location)
		if !ok {
			return textKey(it, t.Get(r, c.field))
		}
		it.k = -tm.UnixNano()
	case kindNumber:
		v := strings.TrimSpace(t.Get(r, c.field))
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) {
			it.f = f
			return it
		}
		// Not a number: after the numbers, as text.
		it.k = 1
		return textKey(it, v)
	case kindStatus:
		// The tab's status order (as the picker lists them); others after, A to Z.
		k, ok := rank[r.Status]
		if !ok {
			k = int64(len(rank))
		}
		it.k, it.s = k, r.Status
	case kindKey:
		return textKey(it, r.ID)
	case kindURL:
		return textKey(it, stripScheme(strings.TrimSpace(t.Get(r, c.field))))
	default:
		return textKey(it, t.Get(r, c.field))
	}
	return it
}

// textKey sets a case-insensitive text key; blank text is blank.
func textKey(it sortItem, s string) sortItem {
	s = strings.TrimSpace(s)
	if s == "" {
		it.blank = true
		return it
	}
	it.s = strings.ToLower(s)
	return it
}

// sortOrder is the display order of d's records under s: every record once.
func sortOrder(d *tabData, s sortState) []int32 {
	t := d.table
	n := len(t.Records)
	out := make([]int32, 0, n)
	if s.col < 0 || s.col >= len(d.cols) {
		for i := range n {
			out = append(out, int32(i))
		}
		return out
	}
	c := &d.cols[s.col]
	var rank map[string]int64
	if c.kind == kindStatus {
		rank = make(map[string]int64, len(t.Statuses))
		for _, st := range t.Statuses {
			k := model.NormStatus(t.Config.Role, st)
			if _, ok := rank[k]; !ok {
				rank[k] = int64(len(rank))
			}
		}
	}
	items := make([]sortItem, 0, n)
	var blanks []int32
	for i := range n {
		it := sortKey(t, c, int32(i), rank)
		if it.blank {
			blanks = append(blanks, int32(i))
			continue
		}
		items = append(items, it)
	}
	dir := 1
	if s.desc {
		dir = -1
	}
	slices.SortFunc(items, func(a, b sortItem) int {
		if c := cmp.Compare(a.f, b.f); c != 0 {
			return dir * c
		}
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return dir * c
		}
		if c := strings.Compare(a.s, b.s); c != 0 {
			return dir * c
		}
		if c := cmp.Compare(a.k2, b.k2); c != 0 {
			return dir * c
		}
		return cmp.Compare(a.ri, b.ri)
	})
	for _, it := range items {
		out = append(out, it.ri)
	}
	return append(out, blanks...)
}

// setSort orders the tab's rows by s. The cursor stays on its record at the same screen
// row, marks stay (they are kept by record), and the filter is applied afresh to the new
// order (its cached steps were subsequences of the old one).
func (ts *tabState) setSort(s sortState, height int) {
	if ts.data == nil {
		return
	}
	screenRow := ts.cursor - ts.offset
	ts.sort = s
	ts.data.order = sortOrder(ts.data, s)
	ts.refilter()
	ts.offset = ts.cursor - screenRow
	ts.scrollTo(height)
}

// adoptSort carries the previous load's sort over to fresh data (by column title: the
// columns can change with the headers), before the filter is re-applied. A column that is
// gone falls back to the default order.
func (ts *tabState) adoptSort(old *tabState) {
	if ts.data == nil || old.data == nil {
		return
	}
	s := sortState{col: sheetOrder, desc: old.sort.desc}
	if old.sort.col >= 0 && old.sort.col < len(old.data.cols) {
		s.col = -2
		title := old.data.cols[old.sort.col].title
		for i := range ts.data.cols {
			if ts.data.cols[i].title == title {
				s.col = i
			}
		}
		if s.col == -2 {
			return // the column is gone: the default order prepare built
		}
	}
	if s == ts.sort {
		return // prepare built it already
	}
	ts.sort = s
	ts.data.order = sortOrder(ts.data, s)
}

// sortAction: a column (or sheet order) was picked in the sort picker.
type sortAction struct{ tab, by string }

func (sortAction) isAction() {}

// startSort opens the sort picker of the active tab: its columns and sheet order, the
// current sort marked with its arrow and what picking it again does.
func (m *Model) startSort(ts *tabState) tea.Cmd {
	if ts == nil || ts.data == nil {
		return nil
	}
	options := make([]string, 0, len(ts.data.cols)+1)
	for _, c := range ts.data.cols {
		options = append(options, c.title)
	}
	options = append(options, sheetOrderOption)
	current, tag := sheetOrderOption, ""
	if s := ts.sort; s.col >= 0 {
		current = ts.data.cols[s.col].title
		tag = s.arrow() + ", again " + sortState{desc: !s.desc}.arrow()
	}
	name := ts.name()
	p := newPicker(m.c, "Sort "+cellLine(name)+" by", options, current)
	p.tag = tag
	p.pick = func(o string) action { return sortAction{tab: name, by: o} }
	m.dialog = p
	return nil
}

// applySort sorts the tab the picker was opened on by the picked column: ascending, or the
// other way round when it is already sorted by it.
func (m *Model) applySort(a sortAction) tea.Cmd {
	ts := m.tabNamed(a.tab)
	if ts == nil || ts.data == nil {
		return nil
	}
	s := sortState{col: sheetOrder}
	for i := range ts.data.cols {
		if ts.data.cols[i].title == a.by {
			s.col = i
		}
	}
	if s.col >= 0 && s.col == ts.sort.col {
		s.desc = !ts.sort.desc
	}
	ts.setSort(s, m.tableH)
	return nil
}
