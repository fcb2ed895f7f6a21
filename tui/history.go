// History: on a store that loads only part of its rows (a database loads the open work), a
// filter whose status or date terms ask for rows the load left out is searched in the store,
// in a Cmd, and its rows are shown in the tab in place of the loaded ones until the filter
// stops asking.

package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// HistorySearcher is a Store that loads only part of its rows and searches the rest
// (store.HistorySearcher; postgres.Store: Load returns the open work, SearchHistory runs
// History in SQL with bound parameters). The TUI asks NeedsHistory in Update (it answers
// without I/O) and shows a search's rows in the tab while the filter asks for them; they
// carry their IDs, so a write on them goes through Apply as any other.
type HistorySearcher = store.HistorySearcher

// historyLimit caps a search's rows: the newest 10,000, as many as a database's open work
// the TUI is built to hold.
const historyLimit = 10_000

// historyView is a tab's reach into history: the search its filter asks for, the one in
// flight, and while history's rows are shown, the loaded rows and their marks, put back when
// the filter stops asking.
type historyView struct {
	// asked is the filter last looked at, so an Update that didn't change it parses nothing.
	asked string
	// want is the search asked for (in flight or shown); zero: none.
	want model.HistorySearch
	// seq is the newest search's number: an older answer is dropped.
	seq       int
	searching bool
	// stale: a load replaced the loaded rows, so the rows shown are searched again.
	stale bool
	err   error
	// open is the loaded rows, kept while history's rows are shown (nil: the loaded rows are
	// shown); openMarked and openN are their marks.
	open       *tabData
	openMarked []bool
	openN      int
}

// shown reports whether the tab shows history's rows.
func (h *historyView) shown() bool { return h.open != nil }

// historyMsg is a search's answer: the rows prepared (filter text included) off the UI
// goroutine.
type historyMsg struct {
	tab  string
	seq  int
	data *tabData
	err  error
}

// searchCmd runs a search in the store, off the UI goroutine (invariant 10).
func searchCmd(ctx context.Context, s HistorySearcher, tab string, q model.HistorySearch, seq int) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		t, err := s.SearchHistory(ctx, tab, q)
		if err != nil {
			return historyMsg{tab: tab, seq: seq, err: err}
		}
		return historyMsg{tab: tab, seq: seq, data: prepare(t)}
	}
}

// historyCmd starts the searches the tabs' filters ask for, and puts the loaded rows back in
// a tab whose filter no longer asks. The root asks after every Update, as for the filter
// text (hayCmd): whatever changes a filter (typing, esc, the group view, a refresh) is seen.
func (t *tabSet) historyCmd(ctx context.Context) tea.Cmd {
	if t.searcher == nil {
		return nil
	}
	var cmds []tea.Cmd
	for _, ts := range t.list {
		if cmd := t.historyOf(ctx, ts); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return tea.Batch(cmds...)
}

// historyOf is historyCmd for one tab.
func (t *tabSet) historyOf(ctx context.Context, ts *tabState) tea.Cmd {
	h := &ts.hist
	q := ts.filterQuery()
	if ts.data == nil || (q == h.asked && !h.stale) {
		return nil
	}
	h.asked = q
	var want model.HistorySearch
	if q != "" {
		want = model.ParseFilter(q).Bind(ts.data.table).History()
		if !t.searcher.NeedsHistory(ts.name(), want) {
			want = model.HistorySearch{}
		}
	}
	if want.IsZero() {
		h.want, h.searching, h.stale, h.err = want, false, false, nil
		if h.shown() {
			ts.leaveHistory(t.tableH)
			t.gen++
		}
		return nil
	}
	want.Limit = historyLimit
	if want.Equal(h.want) && !h.stale {
		return nil // asked already: in flight or shown
	}
	t.histSeq++
	h.want, h.seq, h.searching, h.stale, h.err = want, t.histSeq, true, false, nil
	return searchCmd(ctx, t.searcher, ts.name(), want, h.seq)
}

// onHistory shows a search's rows in its tab (the newest search's only); a failed search
// leaves the rows as they are and says why.
func (t *tabSet) onHistory(msg historyMsg) action {
	ts := t.named(msg.tab)
	if ts == nil || ts.hist.seq != msg.seq || !ts.hist.searching {
		return nil
	}
	ts.hist.searching = false
	if msg.err != nil {
		ts.hist.err = msg.err
		return toastAction{toastError, fmt.Sprintf("searching the history of %s failed: %v (r tries again)", cellLine(ts.name()), msg.err)}
	}
	ts.showHistory(msg.data, t.tableH)
	t.gen++
	return nil
}

// showHistory puts a search's rows in the tab: the loaded rows are kept aside (the first
// time), marks follow IDs, the sort and the filter apply to the new rows, and the cursor
// stays on its record when the search has it.
func (ts *tabState) showHistory(d *tabData, height int) {
	if !ts.hist.shown() {
		open := ts.data
		if open.building != nil {
			// The build of its filter text goes on over these records, whose answer onHay
			// won't match now: a write after they are back copies them first (own), and
			// needsHay builds the text again.
			open.building, open.lent = nil, true
		}
		ts.hist.open, ts.hist.openMarked, ts.hist.openN = open, ts.marked, ts.nMarked
	}
	ts.swapRows(d, make([]bool, len(d.table.Records)), 0, height)
}

// leaveHistory puts the loaded rows back: the marks made on history's rows follow their IDs.
func (ts *tabState) leaveHistory(height int) {
	h := ts.hist
	ts.hist = historyView{asked: h.asked}
	ts.swapRows(h.open, h.openMarked, h.openN, height)
}

// swapRows shows d (with its marks) in place of the rows shown: the marks of the rows shown
// carry over by ID, the sort carries over, the filter is applied afresh and the cursor stays
// on its record where d has it.
func (ts *tabState) swapRows(d *tabData, marked []bool, nMarked, height int) {
	prev := *ts
	cur, _ := ts.current()
	ts.data, ts.marked, ts.nMarked = d, marked, nMarked
	ts.visible, ts.cursor, ts.offset = d.order, 0, 0 // indexes into d from here on
	if prev.nMarked > 0 || nMarked > 0 {
		for ri, r := range prev.data.table.Records {
			if nri, ok := d.byID[r.ID]; ok && r.ID != "" {
				ts.setMark(nri, prev.marked[ri])
			}
		}
	}
	ts.sort = defaultSort(d)
	ts.adoptSort(&prev)
	ts.refilter()
	ts.cursor = 0
	if cur != nil && cur.ID != "" {
		if ri, ok := d.byID[cur.ID]; ok {
			ts.cursor = max(0, ts.indexOf(ri))
		}
	}
	ts.scrollTo(height)
}

// adoptHistory is adopt for a tab showing history's rows: the fresh load becomes the loaded
// rows kept aside (with the marks, sort and filter the old ones had), history's rows stay
// on screen, and they are searched again (the load says something changed).
func (ts *tabState) adoptHistory(old *tabState, height int) {
	open := *old
	open.data, open.marked, open.nMarked = old.hist.open, old.hist.openMarked, old.hist.openN
	open.hist = historyView{}
	open.visible, open.cursor, open.offset = nil, 0, 0 // they index history's rows, not these
	ts.adopt(&open, height)
	fresh, freshMarked, freshN := ts.data, ts.marked, ts.nMarked
	hist := old.hist
	*ts = *old
	ts.hist = hist
	ts.hist.open, ts.hist.openMarked, ts.hist.openN = fresh, freshMarked, freshN
	ts.hist.stale = true
}

// loadedData is the tab's loaded rows, whether they are shown or history's are: the tab
// bar counts them.
func (ts *tabState) loadedData() *tabData {
	if ts.hist.shown() {
		return ts.hist.open
	}
	return ts.data
}

// historyNote is the status bar's word on the active tab's history, "" when it shows the
// loaded rows and searches nothing: searching, what the rows shown are, or why the search
// failed.
func (ts *tabState) historyNote() string {
	h := &ts.hist
	switch {
	case h.searching:
		return "searching history…"
	case h.err != nil:
		return "history search failed"
	case !h.shown():
		return ""
	}
	n := len(ts.data.table.Records)
	what := thousands(n) + " " + words.Plural(n, "row", "rows")
	if n >= historyLimit {
		what = "the newest " + thousands(n) + " rows (capped: narrow the dates)"
	}
	return "history: " + what + " of " + historyTerms(h.want) + ", newest first, at most " + thousands(historyLimit)
}

// historyTerms says what a search selects: `status:delivered|rejected after:2026-01-01`.
func historyTerms(q model.HistorySearch) string {
	var parts []string
	if len(q.Statuses) > 0 {
		parts = append(parts, "status:"+strings.Join(q.Statuses, "|"))
	}
	if !q.From.IsZero() {
		parts = append(parts, "after:"+q.From.Format("2006-01-02T15:04"))
	}
	if !q.To.IsZero() {
		parts = append(parts, "before:"+q.To.Format("2006-01-02T15:04"))
	}
	return cellLine(strings.Join(parts, " "))
}

// thousands writes n with thousands separators: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
