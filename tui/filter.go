package tui

import (
	"runtime"
	"strings"
	"sync"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/triage-dev/triage/model"
)

// filterState is a tab's filter: the applied query and the chain of results it was narrowed
// through. Each step of the chain is a subset of the one before, so typing one more character
// scans only the previous result, and backspace pops back to a result already computed.
type filterState struct {
	query string
	steps []filterStep
	// problem names the query's unknown fields with the tab's fields (model.Matcher.Problem),
	// "" when there are none; the status bar shows it.
	problem string
}

type filterStep struct {
	query string
	f     model.Filter
	rows  []int32
}

// filterQuery is the tab's filter as typed, trimmed: "" when no filter is active.
func (ts *tabState) filterQuery() string { return strings.TrimSpace(ts.filter.query) }

// filterNote is what a confirm of an action on the rows the filter shows says about the
// filter, whole (the dialog wraps it). Without a filter there is nothing to say ("").
func filterNote(q string) string {
	if q = strings.TrimSpace(q); q == "" {
		return ""
	}
	return "(only the rows the filter shows: " + cellLine(q) + ")"
}

// applyFilter shows the rows matching q (model.ParseFilter syntax), in display order. The
// cursor stays on the same record when it still matches, else goes to the top. The display
// order is never re-sorted: filtering keeps a subsequence of it.
func (ts *tabState) applyFilter(q string) {
	ts.filter.query = q
	if ts.data == nil {
		return
	}
	_, cur := ts.current()
	ts.filter.problem = ""
	if strings.TrimSpace(q) == "" {
		ts.filter.steps = nil
		ts.visible = ts.data.order
	} else {
		ts.narrow(q)
	}
	ts.countShownMarks()
	ts.cursor, ts.offset = 0, 0
	if cur >= 0 {
		if i := ts.indexOf(cur); i >= 0 {
			ts.cursor = i
		}
	}
}

// narrow shows the rows matching q, a query that isn't empty: from the chain of results when
// q narrows one of them, else from the whole table. Until the tab's filter text is built
// (filtertext.go) it shows every row, and onHay applies q when the text lands.
func (ts *tabState) narrow(q string) {
	f := model.ParseFilter(q)
	m := f.Bind(ts.data.table)
	ts.filter.problem = m.Problem()
	if p := m.DateProblem(); p != "" && ts.filter.problem == "" {
		ts.filter.problem = p // after:/before: while the date is being typed
	}
	if ts.data.hay == nil {
		ts.filter.steps = nil
		ts.visible = ts.data.order
		return
	}
	steps := ts.filter.steps
	for len(steps) > 0 {
		top := steps[len(steps)-1]
		if top.query == q || f.Narrows(top.f) {
			break
		}
		steps = steps[:len(steps)-1]
	}
	if n := len(steps); n > 0 && steps[n-1].query == q {
		ts.visible = steps[n-1].rows
	} else {
		base := ts.data.order
		if n > 0 {
			base = steps[n-1].rows
		}
		rows := ts.data.match(f, base)
		steps = append(steps, filterStep{query: q, f: f, rows: rows})
		ts.visible = rows
	}
	ts.filter.steps = steps
}

// filterPlaceholder is the example the empty filter prompt shows: the active tab's own
// fields and values, with OR, negation and a phrase (at most 47 cells, so the prompt fits 60
// columns).
func (t *tabSet) filterPlaceholder() string {
	role := model.Role("")
	if ts := t.current(); ts != nil {
		role = ts.cfg.Role
	}
	switch role {
	case model.RoleDeadLetter:
		return "source:crm  kind:503|timeout  !status:discarded"
	case model.RoleQueue:
		return "status:error|claimed  type:send  !timeout"
	}
	return `status:new|read  !spam  email:@acme  "call me"`
}

// filterNoteLines is the note under the status bar while the active tab's filter names a
// field the tab doesn't have: the field and the tab's fields, wrapped to w in at most two
// lines. It is there while typing and after enter, and goes when the query is fixed. The
// term itself is searched as text meanwhile (usually "No rows match"). covered: the table is
// not on screen (the help, a detail view, a run), so neither is the note.
func (t *tabSet) filterNoteLines(c *common, w int, covered bool) []string {
	ts := t.current()
	if ts == nil || ts.filter.problem == "" || covered {
		return nil
	}
	st := c.styles
	lines := wrapText(cellLine(ts.filter.problem), w-2)
	if len(lines) > 2 {
		lines = append(lines[:1], lines[1]+" "+strings.Join(lines[2:], " "))
	}
	for i, l := range lines {
		lines[i] = fitStyled(" "+st.paint(st.Problem, truncate(l, w-2)), w)
	}
	return lines
}

// refilter recomputes the filter from scratch, after rows changed under it (a write).
func (ts *tabState) refilter() {
	ts.filter.steps = nil
	ts.applyFilter(ts.filter.query)
}

// match returns the rows of base that pass the filter, in base's order. Big scans are split
// across CPUs (pure computation; Matcher is read-only), so even a keystroke that can't narrow
// stays within budget at 100,000 rows.
func (d *tabData) match(f model.Filter, base []int32) []int32 {
	if f.Empty() {
		return base
	}
	m := f.Bind(d.table)
	// Before the filter text is built (filtertext.go) free-text terms match nothing: narrow
	// waits for it, and groupQuery's filters are field terms only.
	hay := d.hay
	recs := d.table.Records
	scan := func(part []int32) []int32 {
		var out []int32
		for _, ri := range part {
			h := ""
			if hay != nil {
				h = hay[ri]
			}
			if m.Match(&recs[ri], h) {
				out = append(out, ri)
			}
		}
		return out
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	if len(base) < 8192 || workers < 2 {
		return scan(base)
	}
	chunk := (len(base) + workers - 1) / workers
	parts := make([][]int32, 0, workers)
	for lo := 0; lo < len(base); lo += chunk {
		parts = append(parts, base[lo:min(lo+chunk, len(base))])
	}
	results := make([][]int32, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = scan(p)
		}()
	}
	wg.Wait()
	total := 0
	for _, r := range results {
		total += len(r)
	}
	out := make([]int32, 0, total)
	for _, r := range results {
		out = append(out, r...)
	}
	return out
}

// filterPrompt is the filter's line at the foot of the table (`/`): whether it is open, and the
// text typed. The root opens it (with the tab's query), draws it and places the cursor.
type filterPrompt struct {
	c     *common
	open  bool
	input lineInput
}

// filterQueryAction: the prompt's text is now query (cleared: esc emptied it); the root
// filters the tab by it.
type filterQueryAction struct {
	query   string
	cleared bool
}

func (filterQueryAction) isAction() {}

// filterMoveAction: an arrow while typing (letters are text here) moves the table's cursor by d.
type filterMoveAction struct{ d int }

func (filterMoveAction) isAction() {}

// Update edits the prompt's line: enter keeps the filter (the prompt closes), esc clears it,
// the filter's arrows move the table's cursor, anything else (a key, a paste) edits the text.
func (p filterPrompt) Update(msg tea.Msg) (filterPrompt, action) {
	k := p.c.keys
	if msg, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(msg, k.FilterKeep):
			p.open = false
			return p, nil
		case key.Matches(msg, k.FilterCancel):
			p.open = false
			p.input.SetValue("")
			return p, filterQueryAction{cleared: true}
		case key.Matches(msg, k.FilterPrev):
			return p, filterMoveAction{d: -1}
		case key.Matches(msg, k.FilterNext):
			return p, filterMoveAction{d: 1}
		}
	}
	p.input, _ = p.input.Update(msg)
	return p, filterQueryAction{query: p.input.Value()}
}
