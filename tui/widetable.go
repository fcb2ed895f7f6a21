// The wide view (ctrl+w, k9s's habit): the table shows every column of the sheet, in its
// order, each as wide as its widest cell on the rows it measures (long text up to wideTextMax
// cells), so nothing is cut; wider than the terminal, it scrolls sideways (←/→, h/l), the
// gutter (cursor, mark, problem) staying put. ctrl+w again goes back to the tab's columns. The
// sort, filter and marks are the tab's either way.

package tui

import (
	"github.com/charmbracelet/x/ansi"
)

// wideMeasured is how many rows the wide view measures its widths on (the filter's first):
// measuring 100,000 rows at every toggle would hold the keypress.
const wideMeasured = 5000

// cols are the columns the table shows: the wide view's, or the tab's.
func (ts *tabState) cols() []column {
	if ts.wide {
		ts.makeWide()
		return ts.wideCols
	}
	return ts.data.cols
}

// sortedTitle is the title of the column the tab is sorted by ("" in sheet order): the wide
// view marks its own column of that title.
func (ts *tabState) sortedTitle() string {
	if ts.sort.col >= 0 && ts.sort.col < len(ts.data.cols) {
		return ts.data.cols[ts.sort.col].title
	}
	return ""
}

// toggleWide switches the wide view on or off.
func (ts *tabState) toggleWide() {
	if ts.data == nil {
		return
	}
	ts.wide, ts.xoff = !ts.wide, 0
	ts.widths = nil
}

// makeWide makes the wide view's columns for the tab's data, once per load.
func (ts *tabState) makeWide() {
	if ts.wideFor != ts.data {
		ts.wideCols, ts.wideFor = wideColumns(ts.data.table), ts.data
		ts.widths = nil
	}
}

// wideWidths are the wide view's column widths: each column's widest cell among the first
// wideMeasured rows the filter shows (and its title), capped at the column's max.
func (ts *tabState) wideWidths(c *common) []int {
	ts.makeWide()
	cols := ts.wideCols
	t := ts.data.table
	now := c.now()
	ws := make([]int, len(cols))
	sorted := ts.sortedTitle()
	for i := range cols {
		ws[i] = max(1, textWidth(cols[i].title))
		if cols[i].title == sorted {
			ws[i] += 2 // room for the arrow (" ▲")
		}
	}
	rows := ts.visible[:min(len(ts.visible), wideMeasured)]
	for _, ri := range rows {
		r := &t.Records[ri]
		for i := range cols {
			if ws[i] >= cols[i].max {
				continue
			}
			ws[i] = min(cols[i].max, max(ws[i], textWidth(cellText(t, r, &cols[i], now))))
		}
	}
	return ws
}

// wideWidth is the wide table's whole width: the gutter, the columns and the spaces between.
func (ts *tabState) wideWidth() int {
	w := gutterWidth
	n := 0
	for _, cw := range ts.widths {
		if cw > 0 {
			w += cw
			n++
		}
	}
	return w + max(0, n-1)
}

// sideways is a table line, drawn at its full width, as the w cells on screen: in the wide
// view the gutter and then the columns from xoff on; otherwise the line as it is.
func (ts *tabState) sideways(line string, w int) string {
	if !ts.wide {
		return line
	}
	return ansi.Cut(line, 0, gutterWidth) + ansi.Cut(line, gutterWidth+ts.xoff, gutterWidth+ts.xoff+w-gutterWidth)
}

// scrollSideways moves the wide view by d cells (a third of the table's width per key).
func (ts *tabState) scrollSideways(d, w int) {
	if !ts.wide {
		return
	}
	ts.xoff = max(0, min(ts.xoff+d, ts.wideWidth()-w))
}
