// The filter text: what free-text filter terms search (model.Haystack per record), built off
// the UI goroutine when a tab first needs it rather than before the first screen.

package tui

import (
	"runtime"
	"slices"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// hayBuild is a build of a tab's filter text in flight. It reads recs, the records as they
// were when it started; Update never writes into them meanwhile (tabData.own copies the
// records before the first write), and the rows written since are rebuilt when it lands.
type hayBuild struct {
	recs  []model.Record
	dirty []int32 // record indices written since the build started
}

// hayMsg is a build's result: the filter text of b's records.
type hayMsg struct {
	b   *hayBuild
	hay []string
}

// buildHay builds the filter text of recs, split across CPUs: it is pure computation,
// ~0.5 µs a row, 55 ms at 100,000 rows on one core of a 2-core machine.
func buildHay(recs []model.Record) []string {
	hay := make([]string, len(recs))
	workers := min(runtime.GOMAXPROCS(0), 8)
	if len(recs) < 4096 {
		workers = 1
	}
	chunk := (len(recs) + workers - 1) / max(workers, 1)
	var wg sync.WaitGroup
	for lo := 0; lo < len(recs); lo += chunk {
		hi := min(lo+chunk, len(recs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				hay[i] = model.Haystack(&recs[i])
			}
		}()
	}
	wg.Wait()
	return hay
}

// haystacks builds the filter text now if it isn't yet. Only for data no Update holds yet
// (prepare, the load Cmd): on the UI goroutine it would block a keypress for 55 ms at
// 100,000 rows.
func (d *tabData) haystacks() []string {
	if d.hay == nil {
		d.hay = buildHay(d.table.Records)
	}
	return d.hay
}

// readByBuild reports whether a build in flight reads the records the table holds now, so
// they must be copied before a write (own).
func (d *tabData) readByBuild() bool {
	recs := d.table.Records
	return d.building != nil && len(recs) > 0 && len(d.building.recs) > 0 && &d.building.recs[0] == &recs[0]
}

// needsHay reports whether ts needs its filter text and has none on the way: a filter is set
// (it waits for it), or the filter prompt is open on it (the first key typed will).
func (ts *tabState) needsHay(promptOpen bool) bool {
	d := ts.data
	if d == nil || d.hay != nil || d.building != nil {
		return false
	}
	return promptOpen || ts.filterQuery() != ""
}

// hayCmd starts building the filter text of the tabs that need it (needsHay), off the UI
// goroutine. The root asks after every Update, so whatever sets a filter or opens the prompt
// gets it without asking: `/`, the group view's enter, a refresh.
func (t *tabSet) hayCmd(promptOpen bool) tea.Cmd {
	var cmds []tea.Cmd
	for i, ts := range t.list {
		if !ts.needsHay(promptOpen && i == t.active) {
			continue
		}
		b := &hayBuild{recs: ts.data.table.Records}
		ts.data.building = b
		cmds = append(cmds, func() tea.Msg { return hayMsg{b: b, hay: buildHay(b.recs)} })
	}
	return tea.Batch(cmds...)
}

// onHay puts a build's filter text in place, rebuilding the rows written meanwhile, and
// applies the filter typed while it was built. A build for data a refresh replaced is
// dropped.
func (t *tabSet) onHay(msg hayMsg) {
	for _, ts := range t.list {
		d := ts.data
		if d == nil || d.building != msg.b {
			continue
		}
		for _, ri := range msg.b.dirty {
			msg.hay[ri] = model.Haystack(&d.table.Records[ri])
		}
		d.hay, d.building = msg.hay, nil
		if ts.filterQuery() != "" {
			ts.refilter()
			ts.scrollTo(t.tableH)
		}
	}
}

// maxHeldKeys bounds the keys held while a filter waits for its text: a held-down key can't
// grow the queue without end.
const maxHeldKeys = 64

// releaseHeld returns the keys held while the active tab's filter waited, once it no longer
// waits (its text landed, or a refresh brought the rows with their text, or the tab is gone),
// for the root to carry out in order; nil while it still waits.
func (t *tabSet) releaseHeld() []tea.KeyPressMsg {
	if len(t.held) == 0 {
		return nil
	}
	if ts := t.current(); ts != nil && ts.waiting() {
		return nil
	}
	held := t.held
	t.held = nil
	return held
}

// waiting reports whether the tab's filter waits for its filter text (onHay applies it).
func (ts *tabState) waiting() bool {
	return ts.data != nil && ts.data.hay == nil && ts.filterQuery() != ""
}

// lentText is a tab's filter text lent to a refresh's load Cmd, with the records and ID
// index it was built from: the new rows that are unchanged reuse its strings. Update
// copies the records and the text before writing them (tabData.own), so the Cmd reads them
// while the UI goes on.
type lentText struct {
	recs []model.Record
	hay  []string
	byID map[string]int32
}

// filtering lends the filter text of the tabs with a filter set to a refresh (a tab whose
// text isn't built lends nothing): the load Cmd builds their new text, so the filter holds
// on the new rows from the first frame, reusing the strings of the rows that didn't change.
func (t *tabSet) filtering() map[string]lentText {
	var out map[string]lentText
	for _, ts := range t.list {
		if ts.filterQuery() == "" || ts.data == nil {
			continue
		}
		if out == nil {
			out = map[string]lentText{}
		}
		d := ts.data
		if d.hay != nil {
			d.lent = true
			out[ts.name()] = lentText{recs: d.table.Records, hay: d.hay, byID: d.byID}
		} else {
			out[ts.name()] = lentText{}
		}
	}
	return out
}

// buildHayReusing builds the filter text of recs as buildHay does, taking the string of an
// unchanged row (same ID, cells, status and problems) from prev: a refresh of a tab nobody
// changed allocates no new text, and the old and the new data share one copy of it.
func buildHayReusing(recs []model.Record, prev lentText) []string {
	if prev.hay == nil {
		return buildHay(recs)
	}
	hay := make([]string, len(recs))
	workers := min(runtime.GOMAXPROCS(0), 8)
	chunk := (len(recs) + workers - 1) / max(workers, 1)
	var wg sync.WaitGroup
	for lo := 0; lo < len(recs); lo += chunk {
		hi := min(lo+chunk, len(recs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				r := &recs[i]
				if oi, ok := prev.byID[r.ID]; ok && r.ID != "" && sameText(r, &prev.recs[oi]) {
					hay[i] = prev.hay[oi]
				} else {
					hay[i] = model.Haystack(r)
				}
			}
		}()
	}
	wg.Wait()
	return hay
}

// sameText reports whether a and b have the same filter text (model.Haystack's inputs).
func sameText(a, b *model.Record) bool {
	return a.Status == b.Status && slices.Equal(a.Cells, b.Cells) && slices.Equal(a.Problems, b.Problems)
}
