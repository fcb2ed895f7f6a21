package tui

import (
	"runtime"
	"strings"
	"sync"

	"github.com/triage-dev/triage/model"
)

// filterState is a tab's filter: the applied query and the chain of results it was narrowed
// through. Each step of the chain is a subset of the one before, so typing one more character
// scans only the previous result, and backspace pops back to a result already computed.
type filterState struct {
	query string
	steps []filterStep
}

type filterStep struct {
	query string
	rows  []int32
}

// filterQuery is the tab's filter as typed, trimmed: "" when no filter is active.
func (ts *tabState) filterQuery() string { return strings.TrimSpace(ts.filter.query) }

// filterNote is what a confirm says about the filter when one is active: a bulk action only
// touches the rows it shows. Without a filter there is nothing to say ("" ).
func filterNote(q string) string {
	if q = strings.TrimSpace(q); q == "" {
		return ""
	}
	return "(rows respect the current filter: " + truncate(cellLine(q), 30) + ")"
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
	if strings.TrimSpace(q) == "" {
		ts.filter.steps = nil
		ts.visible = ts.data.order
	} else {
		steps := ts.filter.steps
		for len(steps) > 0 {
			top := steps[len(steps)-1]
			if top.query == q || narrows(q, top.query) {
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
			rows := ts.data.match(model.ParseFilter(q), base)
			steps = append(steps, filterStep{query: q, rows: rows})
			ts.visible = rows
		}
		ts.filter.steps = steps
	}
	ts.countShownMarks()
	ts.cursor, ts.offset = 0, 0
	if cur >= 0 {
		if i := ts.indexOf(cur); i >= 0 {
			ts.cursor = i
		}
	}
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
	hay := d.haystacks()
	recs := d.table.Records
	scan := func(part []int32) []int32 {
		var out []int32
		for _, ri := range part {
			if m.Match(&recs[ri], hay[ri]) {
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

// narrows reports whether every row matching query next also matches query prev, so next can
// be computed from prev's result instead of the whole table. It mirrors model.ParseFilter:
// whitespace-separated terms, all required; `!` negates; `field:` scopes a term.
//
// Safe: adding a term; extending the last term of a positive substring match (free text or a
// field other than status). Not safe: a negated term (`!ab` → `!abc` matches more), status
// (an exact match: `status:ne` → `status:new` matches more), a term that changes kind
// (`sour` → `source:x`), or deleting anything.
func narrows(next, prev string) bool {
	p, n := strings.Fields(prev), strings.Fields(next)
	if len(p) == 0 || len(n) < len(p) {
		return false
	}
	k := len(p) - 1
	for i := 0; i < k; i++ {
		if n[i] != p[i] {
			return false
		}
	}
	if n[k] == p[k] {
		return true
	}
	if !strings.HasPrefix(n[k], p[k]) || strings.HasPrefix(p[k], "!") {
		return false
	}
	pf, nf := termField(p[k]), termField(n[k])
	if pf != nf {
		return false
	}
	return pf == "" || model.NormHeader(pf) != string(model.FStatus)
}

// termField is the `field` of a `field:value` term, or "" for free text.
func termField(w string) string {
	if i := strings.IndexByte(w, ':'); i > 0 {
		return w[:i]
	}
	return ""
}
