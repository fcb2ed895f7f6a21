// Sorting a tab by a column, as in k9s and gh-dash: the sort key (S) opens a picker of the
// tab's columns and "sheet order"; picking the sorted column again flips its direction.

package tui

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

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

// sortItem is one record's sort key: compared by k, then f, then s, then k2 (each reversed
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
		tm, ok := model.ParseTime(c.raw(t, r), t.Location)
		if !ok {
			return textKey(it, c.raw(t, r))
		}
		it.k = -tm.UnixNano()
	case kindNumber:
		v := strings.TrimSpace(c.raw(t, r))
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
		return textKey(it, stripScheme(strings.TrimSpace(c.raw(t, r))))
	default:
		return textKey(it, c.raw(t, r))
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

// sortOrder is the display order of d's records under s: every record once. A column's
// ascending order is computed once per load (and after a write) and kept; the descending
// one is derived from it in O(rows), so flipping is cheap even at 100,000 rows.
func sortOrder(d *tabData, s sortState) []int32 {
	n := len(d.table.Records)
	if s.col < 0 || s.col >= len(d.cols) {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	if d.sorted == nil {
		d.sorted = map[int]sortedCol{}
	}
	sc, ok := d.sorted[s.col]
	if !ok {
		sc = sortColumn(d, s.col)
		d.sorted[s.col] = sc
	}
	out := make([]int32, 0, n)
	if !s.desc {
		out = append(out, sc.order[:len(sc.order)-sc.blanks]...)
	} else {
		// Reversed, then each run of equal keys put back in sheet order (stable both ways).
		keyed := sc.order[:len(sc.order)-sc.blanks]
		for i := len(keyed) - 1; i >= 0; {
			j := i
			for j > 0 && sc.same[keyed[j-1]] == sc.same[keyed[i]] {
				j--
			}
			out = append(out, keyed[j:i+1]...)
			i = j - 1
		}
	}
	return append(out, sc.order[len(sc.order)-sc.blanks:]...)
}

// sortedCol is a column's ascending order (blank rows last) and, per record, the number of
// its run of equal keys (for the stable descending order).
type sortedCol struct {
	order  []int32
	blanks int
	same   []int32
}

// sortColumn sorts the records by column ci, ascending. Big tables are sorted in parts on
// every CPU and merged: pure computation over keys built first.
func sortColumn(d *tabData, ci int) sortedCol {
	t := d.table
	n := len(t.Records)
	c := &d.cols[ci]
	var rank map[string]int64
	if c.kind == kindStatus {
		rank = statusRank(t)
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
	sortItems(items)
	sc := sortedCol{order: make([]int32, 0, n), blanks: len(blanks), same: make([]int32, n)}
	run := int32(0)
	for i := range items {
		if i > 0 && compareKeys(&items[i-1], &items[i]) != 0 {
			run++
		}
		sc.same[items[i].ri] = run
		sc.order = append(sc.order, items[i].ri)
	}
	sc.order = append(sc.order, blanks...)
	return sc
}

// statusRank is each status's place in the tab's list (normalised).
func statusRank(t *model.Table) map[string]int64 {
	rank := make(map[string]int64, len(t.Statuses))
	for _, st := range t.Statuses {
		k := model.NormStatus(t.Config.Role, st)
		if _, ok := rank[k]; !ok {
			rank[k] = int64(len(rank))
		}
	}
	return rank
}

// compareKeys orders two keys, ties left to the record index.
func compareKeys(a, b *sortItem) int {
	if c := cmp.Compare(a.k, b.k); c != 0 {
		return c
	}
	if c := cmp.Compare(a.f, b.f); c != 0 {
		return c
	}
	if c := strings.Compare(a.s, b.s); c != 0 {
		return c
	}
	return cmp.Compare(a.k2, b.k2)
}

func compareItems(a, b sortItem) int {
	if c := compareKeys(&a, &b); c != 0 {
		return c
	}
	return cmp.Compare(a.ri, b.ri)
}

// sortItems sorts keys (a total order: ties broken by record index), in parts on every CPU
// for big tables, then merged.
func sortItems(items []sortItem) {
	workers := min(runtime.GOMAXPROCS(0), 8)
	if len(items) < 16384 || workers < 2 {
		slices.SortFunc(items, compareItems)
		return
	}
	orig := items
	chunk := (len(items) + workers - 1) / workers
	var parts [][]sortItem
	for lo := 0; lo < len(items); lo += chunk {
		parts = append(parts, items[lo:min(lo+chunk, len(items))])
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.SortFunc(p, compareItems)
		}()
	}
	wg.Wait()
	buf := make([]sortItem, len(items))
	for len(parts) > 1 {
		var next [][]sortItem
		off := 0
		for i := 0; i < len(parts); i += 2 {
			if i+1 == len(parts) {
				copy(buf[off:], parts[i])
				next = append(next, buf[off:off+len(parts[i])])
				off += len(parts[i])
				continue
			}
			a, b := parts[i], parts[i+1]
			out := buf[off : off : off+len(a)+len(b)]
			for len(a) > 0 && len(b) > 0 {
				if compareItems(b[0], a[0]) < 0 {
					out, b = append(out, b[0]), b[1:]
				} else {
					out, a = append(out, a[0]), a[1:]
				}
			}
			out = append(append(out, a...), b...)
			next = append(next, out)
			off += len(out)
		}
		// The merged runs live in buf; items becomes the next buffer.
		buf, items = items[:len(buf)], buf
		parts = next
	}
	if &parts[0][0] != &orig[0] {
		copy(orig, parts[0])
	}
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

// sortPicker is the sort picker of tab ts: its columns and sheet order, the
// current sort marked with its arrow and what picking it again does.
func (ts *tabState) sortPicker(c *common) action {
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
	p := newPicker(c, "Sort "+cellLine(name)+" by", options, current)
	p.tag = tag
	p.pick = func(o string) action { return sortAction{tab: name, by: o} }
	return dialogAction{p}
}

// applySort sorts the tab the picker was opened on by the picked column: ascending, or the
// other way round when it is already sorted by it.
func (t *tabSet) applySort(a sortAction) {
	ts := t.named(a.tab)
	if ts == nil || ts.data == nil {
		return
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
	ts.setSort(s, t.tableH)
}
