package tui

import (
	"sort"
	"time"

	"github.com/triage-dev/triage/model"
)

// tabData is a loaded table plus everything derived from it once per load: display order,
// the ID index, column widths and counts. It is built by the load Cmd (off the UI goroutine,
// so a 100,000-row sheet never stalls a keypress) and afterwards owned by Update.
type tabData struct {
	table *model.Table
	// order is the record indices in display order: the tab's sort (sort.go) over the rows.
	// The filter keeps a subsequence of it.
	order   []int32
	byID    map[string]int32
	cols    []column
	natural []int
	counts  map[string]int
	// hay caches model.Haystack per record: built once per loaded table, never per keystroke.
	// It is not built before the first screen (it was half of prepare's cost): a tab gets it
	// off the UI goroutine once it is needed (filtertext.go: the filter prompt opens, or a
	// filter is set), or in the load Cmd for a tab whose filter is active. nil until then.
	// ~20 MB per 100,000 rows (BenchmarkHeap100k), which a TUI nobody filters never spends.
	hay []string
	// building is the filter text's build in flight (filtertext.go), nil when none is.
	building *hayBuild
	// lent: a refresh's load Cmd reads the records and the filter text (tabSet.filtering);
	// the first write copies them (own).
	lent bool
	// oldest is the oldest record time: how wide an age can read (ageWidth).
	oldest time.Time
	// sorted caches each sorted column's ascending order (sort.go), dropped when a record
	// changes (widen).
	sorted map[int]sortedCol
	// shared: table, hay, counts and natural belong to a Prepared other TUIs show too; own
	// copies them before the first change (shared.go).
	shared bool
}

// prepare derives a tabData from a loaded table, the filter text included: what a workbook
// shared by many TUIs gets once (Prepare), and the tests' loads. A load of this TUI's own
// uses prepareScreen and builds the filter text later (filtertext.go).
func prepare(t *model.Table) *tabData {
	d := prepareScreen(t)
	d.haystacks()
	return d
}

// prepareScreen derives what the first screen of a loaded table needs: everything but the
// filter text.
//
// Order: the inbox and the dead-letter tab show newest first (by timestamp; rows without one
// last, in sheet order), the queue shows sheet order (first in, first out, as workers read
// it). Equal timestamps put the later row first. It is the order sortOrder gives for the
// tab's defaultSort, computed here, off the UI goroutine, so a load costs no sort in Update.
func prepareScreen(t *model.Table) *tabData {
	n := len(t.Records)
	d := &tabData{
		table:  t,
		order:  make([]int32, n),
		byID:   make(map[string]int32, n),
		counts: t.Counts(),
	}
	for i := range t.Records {
		d.order[i] = int32(i)
		if id := t.Records[i].ID; id != "" {
			d.byID[id] = int32(i)
		}
	}
	if t.Config.Role != model.RoleQueue {
		recs := t.Records
		sort.SliceStable(d.order, func(a, b int) bool {
			ra, rb := &recs[d.order[a]], &recs[d.order[b]]
			za, zb := ra.Time.IsZero(), rb.Time.IsZero()
			switch {
			case za != zb:
				return zb // dated rows first
			case za:
				return ra.Row < rb.Row
			case !ra.Time.Equal(rb.Time):
				return ra.Time.After(rb.Time)
			}
			return ra.Row > rb.Row // same instant: the later row is the newer one
		})
	}
	d.cols = roleColumns(t)
	d.natural = naturalWidths(t, d.cols)
	d.oldest = oldestTime(t)
	return d
}

// tabState is one tab as the user sees it: its data (or why it has none), and the view
// state each tab keeps on its own: cursor, scroll, filter, marks.
type tabState struct {
	cfg  model.TabConfig
	data *tabData // nil when the tab is broken
	err  error    // why the tab is broken

	visible []int32 // the filtered display order: record indices
	cursor  int     // index into visible
	offset  int     // first visible row on screen

	marked  []bool // by record index
	nMarked int
	// shownMarks counts the marked rows the filter shows, kept up to date so the footer
	// doesn't rescan 100,000 rows per frame to say how many marks the filter hides.
	shownMarks int

	filter filterState
	// sort is how the rows are ordered (a column and a direction, or sheet order); the
	// default is what prepare built (defaultSort).
	sort sortState

	// stale counts the queue's stale claims (recomputed on load, write, and every
	// staleRecount as time passes), for the tab bar.
	stale int

	widths  []int     // column widths as laid out for laidOut
	laidOut layoutKey // what widths were computed for

	// wide is the wide view (ctrl+w, widetable.go): every column of the sheet, cells whole,
	// scrolled sideways by xoff cells.
	wide bool
	xoff int
	// wideCols are the wide view's columns, made for the data wideFor the first time it is
	// shown (a tab's data may be shared with other sessions: this is the TUI's own).
	wideCols []column
	wideFor  *tabData

	// hist is the tab's reach into history on a store that loads only part of its rows
	// (history.go): the search its filter asks for, and the loaded rows while history's are
	// shown.
	hist historyView
}

func newTabState(cfg model.TabConfig, d *tabData, err error) *tabState {
	ts := &tabState{cfg: cfg, data: d, err: err, sort: sortState{col: sheetOrder}}
	if d != nil {
		ts.sort = defaultSort(d)
		ts.visible = d.order
		ts.marked = make([]bool, len(d.table.Records))
	}
	return ts
}

// name is the tab's sheet name.
func (ts *tabState) name() string { return ts.cfg.Name }

// current returns the record under the cursor and its index, or nil.
func (ts *tabState) current() (*model.Record, int32) {
	if ts.data == nil || ts.cursor < 0 || ts.cursor >= len(ts.visible) {
		return nil, -1
	}
	ri := ts.visible[ts.cursor]
	return &ts.data.table.Records[ri], ri
}

// move moves the cursor by delta rows and scrolls just enough to keep it on screen. It is
// O(1): nothing about the rows is recomputed.
func (ts *tabState) move(delta, height int) {
	ts.setCursor(ts.cursor+delta, height)
}

// setCursor puts the cursor on a visible row (clamped) and keeps it on screen.
func (ts *tabState) setCursor(i, height int) {
	n := len(ts.visible)
	if i >= n {
		i = n - 1
	}
	if i < 0 {
		i = 0
	}
	ts.cursor = i
	ts.scrollTo(height)
}

// scrollTo adjusts the scroll offset so the cursor is inside a window of height rows.
func (ts *tabState) scrollTo(height int) {
	if height < 1 {
		height = 1
	}
	if ts.cursor < ts.offset {
		ts.offset = ts.cursor
	}
	if ts.cursor >= ts.offset+height {
		ts.offset = ts.cursor - height + 1
	}
	if maxOff := len(ts.visible) - height; ts.offset > maxOff {
		ts.offset = max(0, maxOff)
	}
	if ts.offset < 0 {
		ts.offset = 0
	}
}

// toggleMark flips the mark of the cursor row (a shown row).
func (ts *tabState) toggleMark() {
	_, ri := ts.current()
	if ri < 0 {
		return
	}
	on := !ts.marked[ri]
	ts.setMark(ri, on)
	if on {
		ts.shownMarks++
	} else {
		ts.shownMarks--
	}
}

// setMark sets one record's mark; a caller touching rows the filter may show recounts
// shownMarks afterwards.
func (ts *tabState) setMark(ri int32, on bool) {
	if ts.marked[ri] == on {
		return
	}
	ts.marked[ri] = on
	if on {
		ts.nMarked++
	} else {
		ts.nMarked--
	}
}

// markVisible marks every row the filter shows.
func (ts *tabState) markVisible() {
	for _, ri := range ts.visible {
		ts.setMark(ri, true)
	}
	ts.shownMarks = len(ts.visible)
}

// unmarkAll drops every mark of the tab.
func (ts *tabState) unmarkAll() {
	clear(ts.marked)
	ts.nMarked, ts.shownMarks = 0, 0
}

// countShownMarks recounts the marked rows the filter shows: O(shown rows), done when the
// filter or the data changes, never per frame.
func (ts *tabState) countShownMarks() {
	ts.shownMarks = 0
	if ts.nMarked == 0 {
		return
	}
	for _, ri := range ts.visible {
		if ts.marked[ri] {
			ts.shownMarks++
		}
	}
}

// hiddenMarks is how many marked rows the filter hides.
func (ts *tabState) hiddenMarks() int { return ts.nMarked - ts.shownMarks }

// targets returns what a bulk action applies to: the marked rows the current filter shows,
// in display order, else the cursor row. hiddenMarks counts marked rows the filter hides;
// they are left alone, and the confirm dialog says so.
func (ts *tabState) targets() (recs []int32, hiddenMarks int) {
	if ts.data == nil {
		return nil, 0
	}
	if ts.nMarked > 0 {
		for _, ri := range ts.visible {
			if ts.marked[ri] {
				recs = append(recs, ri)
			}
		}
		return recs, ts.nMarked - len(recs)
	}
	if _, ri := ts.current(); ri >= 0 {
		return []int32{ri}, 0
	}
	return nil, 0
}

// adopt carries the view state of the previous load of this tab over to freshly loaded data:
// the cursor stays on the same record (by ID) at the same screen row, marks follow their IDs
// (marks whose ID vanished are dropped), the sort and the filter are re-applied.
func (ts *tabState) adopt(old *tabState, height int) {
	if old == nil || old.data == nil || ts.data == nil {
		return
	}
	if old.hist.shown() {
		ts.adoptHistory(old, height)
		return
	}
	for ri, on := range old.marked {
		if !on {
			continue
		}
		if id := old.data.table.Records[ri].ID; id != "" {
			if nri, ok := ts.data.byID[id]; ok {
				ts.setMark(nri, true)
			}
		}
	}
	ts.adoptSort(old)
	ts.wide, ts.xoff = old.wide, old.xoff // the wide view stays, its columns made for the new rows
	ts.applyFilter(old.filter.query)
	screenRow := old.cursor - old.offset
	cur, _ := old.current()
	ts.cursor = min(old.cursor, max(0, len(ts.visible)-1))
	if cur != nil && cur.ID != "" {
		if nri, ok := ts.data.byID[cur.ID]; ok {
			if i := ts.indexOf(nri); i >= 0 {
				ts.cursor = i
			}
		}
	}
	ts.offset = ts.cursor - screenRow
	ts.scrollTo(height)
}

// indexOf finds a record in the visible list, or -1. O(visible); used on reload and after
// filter changes, never per cursor move.
func (ts *tabState) indexOf(ri int32) int {
	for i, v := range ts.visible {
		if v == ri {
			return i
		}
	}
	return -1
}
