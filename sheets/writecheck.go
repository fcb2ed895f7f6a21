package sheets

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/triage-dev/triage/model"
	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// This file is the second half of invariant 1: a write goes to row numbers, so it reads back
// what it hit (in its own atomic answer), and a value of ours found on a row that was not the
// target is put back (see Apply).

// applyState is what one Apply knows across its rounds.
type applyState struct {
	edits []model.Edit
	// final[i] is edit i's outcome once decided.
	final []*outcome
	// sent[i] is what a failed write put (or would have put) in edit i's row.
	sent []*inDoubt
	// strays are values of ours found on rows that were not the targets, still to restore.
	strays []*stray
	// lost are strays whose row can no longer be told apart (see tabView.locate).
	lost []*stray
	// round counts the writes that were answered.
	round int
	// failedPlans are the writes that failed without an answer (they may have landed).
	failedPlans []*writePlan
	// touched are, per tab (work index), the columns (keys) any write of this Apply has put
	// a value in: a stray's row is recognised by the other columns (see stray.written).
	touched map[int]map[string]bool
	// damaged are cells of rows inserted between a read and a write that a write hit:
	// restored to empty, their value before unknown (see model.Damage).
	damaged []model.Damage
}

// stray is a value of ours that a write put on a row that was not its target: someone
// sorted, inserted or deleted rows between our read and our write.
type stray struct {
	wi int
	// key is the column, by column key (see columnKeys); header is its name, for messages.
	key, header string
	// ours is the value we left there; restore is what the row held before, and raw that
	// value with its type as read (nil: text).
	ours, restore string
	raw           any
	// unknownPrior says the row was not in our read (it appeared after it): restore is "".
	unknownPrior bool
	// at is the whole row as our write left it, by column key: how it is found again.
	at map[string]string
	// written are the columns (keys) our writes put values in, on any row of its tab, so
	// far (a map shared by the Apply, growing with it): the row is found by the rest of at
	// when those changed since (other writes and restores of ours).
	written map[string]bool
	// ident is the row's identity once restored ("" if unknown): found by it when the row
	// changed otherwise since.
	ident string
	// row is the 1-based row it was seen on, for messages.
	row int
	// fresh says it was found in the answer just verified: row is where it is right now,
	// unless rows moved again since (restoreNow writes it there at once).
	fresh bool
	// settled says an edit made the value there its own (it set the cell to what the stray
	// left): nothing is owed to the row any more.
	settled bool
}

func (sr *stray) String() string {
	who := "a row that appeared after triage read the sheet"
	if sr.ident != "" {
		who = fmt.Sprintf("the row of %q", sr.ident)
	}
	return fmt.Sprintf("%s (row %d when last seen), column %s: triage's %q should be %q", who, sr.row, sr.header, sr.ours, sr.restore)
}

func (st *applyState) straysOf(wi int) []*stray {
	var out []*stray
	for _, sr := range st.strays {
		if sr.wi == wi {
			out = append(out, sr)
		}
	}
	return out
}

// touchedOf is the (shared, growing) set of columns this Apply wrote in tab wi.
func (st *applyState) touchedOf(wi int) map[string]bool {
	if st.touched == nil {
		st.touched = map[int]map[string]bool{}
	}
	if st.touched[wi] == nil {
		st.touched[wi] = map[string]bool{}
	}
	return st.touched[wi]
}

// failed records a write that failed without an answer: it may have landed.
func (st *applyState) failed(p *writePlan) {
	for i, v := range p.sent {
		if v != nil {
			st.sent[i] = v
		}
	}
	st.lost = append(st.lost, p.lost...)
	st.failedPlans = append(st.failedPlans, p)
}

// stampedStrays finds where a write that failed without an answer landed on rows that were
// not its targets (rows moved between its read and its write): there the write left this
// Apply's stamp in triaged_at, a value unique to this Apply. Such a row, neither the row of
// one of this Apply's edits nor a row a restore of this round already covers, is matched to
// the row write of the failed plan whose cells it holds, and what it held before is found in
// that plan's read, as for any other stray. Without a triaged_at column nothing in a row says
// a lost write hit it: that case stays undetected (documented on Apply).
func (t *tabView) stampedStrays(wi int, now string, failed []*writePlan, edits []model.Edit, mine []int, sent []*inDoubt, final []*outcome) []*stray {
	atCol := t.hm.Col(model.FTriagedAt)
	// A dead letter's key that triage writes is unique to the row it was made for (the key
	// its content gives): a row whose key cell holds a key a lost write sent, and whose own
	// content doesn't give that key, was hit by that write, triaged_at or not.
	keyCol := -1
	if t.tc.Role == model.RoleDeadLetter {
		keyCol = t.hm.Col(model.FKey)
	}
	sentKeys := map[string]bool{}
	if keyCol >= 0 {
		for _, fp := range failed {
			view := fp.views[wi]
			if view == nil {
				continue
			}
			for _, rw := range fp.rows {
				for _, c := range rw.cells {
					if rw.wi == wi && c.value != "" && keyAt(view.keys, c.col) == t.keys[keyCol] {
						sentKeys[c.value] = true
					}
				}
			}
		}
	}
	if atCol < 0 && len(sentKeys) == 0 {
		return nil
	}
	// foreignKey says row r holds in its key cell a key a lost write sent that its own content
	// doesn't give: whichever edit that key is for, this is not its row.
	foreignKey := func(r int) bool {
		if k := t.read(r, keyCol); keyCol >= 0 && sentKeys[k] {
			cells := make([]string, max(len(t.rows[r]), len(t.hm.Headers)))
			for c := range cells {
				cells[c] = t.read(r, c)
			}
			cells[keyCol] = ""
			return model.RowIdentity(t.tc, t.hm, cells) != k
		}
		return false
	}
	hitBy := func(r int) bool {
		return (atCol >= 0 && t.read(r, atCol) == now) || foreignKey(r)
	}
	// ownRow[r] is the identity of the edit whose row r is; landedRight says the row holds
	// that edit's own values (a decided edit, or the failed write landed there).
	ownRow := map[int]string{}
	landedRight := map[int]bool{}
	for _, i := range mine {
		if rows := t.ids[edits[i].ID]; len(rows) == 1 && !foreignKey(rows[0]) {
			ownRow[rows[0]] = edits[i].ID
			// A decided edit's row holds our stamp by right (an answered write put it there).
			if final[i] != nil || (sent[i] != nil && t.holds(rows[0], sent[i].set)) {
				landedRight[rows[0]] = true
			}
		}
	}
	var out []*stray
	for r := 1; r < len(t.rows); r++ {
		if landedRight[r] || !hitBy(r) {
			continue
		}
		busy := false
		for c := range t.restored {
			busy = busy || c.row == r
		}
		if busy {
			continue
		}
		content := t.rowContent(r)
		for j := len(failed) - 1; j >= 0 && !busy; j-- {
			fp := failed[j]
			view := fp.views[wi]
			if view == nil {
				continue
			}
			for _, rw := range fp.rows {
				if rw.wi != wi || !holdsCells(content, view.keys, rw.cells) {
					continue
				}
				if foreignKey(r) && !slices.ContainsFunc(rw.cells, func(c cellWrite) bool {
					return c.value == t.read(r, keyCol) && keyAt(view.keys, c.col) == t.keys[keyCol]
				}) {
					continue // another write whose values the row happens to hold
				}
				if id, ok := ownRow[r]; ok && len(rw.edits) > 0 && edits[rw.edits[0]].ID == id {
					// Its own write: it landed, then someone changed the row (apply decides).
					continue
				}
				prior, src, known := view.prior(content, view.keys, rw.cells, nil)
				known = known || blankBut(content, view.keys, rw.cells)
				written := map[string]bool{}
				for _, c := range rw.cells {
					written[keyAt(view.keys, c.col)] = true
				}
				var found []*stray
				for _, c := range rw.cells {
					k := keyAt(view.keys, c.col)
					if prior[k] == c.value || t.colOfKey(k) < 0 {
						continue
					}
					found = append(found, &stray{wi: wi, key: k, header: headerAt(t.header(), t.colOfKey(k)), ours: c.value,
						restore: prior[k], raw: view.rawAt(src, k, prior[k]), unknownPrior: !known, at: content, written: written, row: r + 1})
				}
				// Its identity is the row's with our values off it: a key of ours on it is not.
				restored := maps.Clone(content)
				for _, sr := range found {
					if sr.restore == "" {
						delete(restored, sr.key)
					} else {
						restored[sr.key] = sr.restore
					}
				}
				ident := t.identityOfContent(restored)
				for _, sr := range found {
					sr.ident = ident
				}
				out = append(out, found...)
				busy = true
				break
			}
		}
	}
	return out
}

// before is a cell as it was before this Apply touched it: a restore of this round, else as
// read.
func (t *tabView) before(row, col int) string {
	if v, ok := t.restored[cell{row, col}]; ok {
		return v
	}
	return t.read(row, col)
}

// rawAt is the typed value of row r's cell in column k as read, if it reads as v (nil
// otherwise: the restore is then written as text).
func (t *tabView) rawAt(r int, k, v string) any {
	c := t.colOfKey(k)
	if r < 1 || r >= len(t.rows) || c < 0 || c >= len(t.rows[r]) || t.read(r, c) != v {
		return nil
	}
	switch x := t.rows[r][c].(type) {
	case float64, bool:
		return x
	}
	return nil
}

// blankBut reports whether a row holds nothing but the cells of a write.
func blankBut(content map[string]string, keys []string, cells []cellWrite) bool {
	skip := map[string]bool{}
	for _, c := range cells {
		skip[keyAt(keys, c.col)] = true
	}
	for k := range content {
		if !skip[k] {
			return false
		}
	}
	return true
}

// holdsCells reports whether a row (by column key) holds every cell of a row write.
func holdsCells(content map[string]string, keys []string, cells []cellWrite) bool {
	for _, c := range cells {
		if content[keyAt(keys, c.col)] != c.value {
			return false
		}
	}
	return true
}

// header is the header row as read.
func (t *tabView) header() []string {
	if len(t.rows) == 0 {
		return nil
	}
	h := make([]string, len(t.rows[0]))
	for i, v := range t.rows[0] {
		h[i] = model.CellString(v)
	}
	return h
}

// readsLike reports whether row r holds what now holds in every column but those in skip,
// each cell compared both as read and as it was before this Apply (a value of ours from an
// earlier round may still be on it, its restore pending: either way it is that row).
func (t *tabView) readsLike(r int, now map[string]string, skip map[string]bool) bool {
	read, prior := t.rowContent(r), t.priorContent(r)
	for _, m := range []map[string]string{read, prior, now} {
		for k := range m {
			if !skip[k] && now[k] != read[k] && now[k] != prior[k] {
				return false
			}
		}
	}
	return true
}

// identityOfContent is the identity of a row given by column key.
func (t *tabView) identityOfContent(m map[string]string) string {
	cells := make([]string, max(len(t.keys), len(t.hm.Headers)))
	for c := range cells {
		cells[c] = m[keyAt(t.keys, c)]
	}
	return model.RowIdentity(t.tc, t.hm, cells)
}

// verify checks every written row of an answered write (see Apply) and decides the edits it
// can: those that needed no write, those whose row holds what was meant, those whose cell
// someone changed right after ours. Edits whose row turned out to be another row stay
// undecided (located again next round), and what of ours is on that other row becomes a
// stray to restore.
func (st *applyState) verify(p *writePlan, work []*tabWork, ids []int64, resp *sheetsapi.BatchUpdateSpreadsheetResponse) error {
	st.round++
	st.lost = append(st.lost, p.lost...)
	for _, sr := range st.strays {
		sr.fresh = false
	}
	if p.restoreOnly {
		// Only restores: no edit is decided here, and strays not in it stay as they are.
		defer func(kept []*stray) { st.strays = append(st.strays, kept...) }(p.kept)
	}
	inFlight := map[int]bool{}
	for _, rw := range p.rows {
		for _, i := range rw.edits {
			inFlight[i] = true
		}
	}
	for i := range st.edits {
		if st.final[i] == nil && !inFlight[i] && !p.restoreOnly && !p.stopEdits {
			o := p.outcomes[i]
			st.final[i] = &o
		}
	}
	got, err := readBack(resp, work, ids, p)
	if err != nil {
		return err
	}
	for _, rw := range p.rows {
		t := st.touchedOf(rw.wi)
		for _, c := range rw.cells {
			t[keyAt(p.views[rw.wi].keys, c.col)] = true
		}
	}
	var next []*stray
	for _, rw := range p.rows {

		tab := p.views[rw.wi]
		g := got[rw.wi]
		// Row 1 of the answer is the header, unless someone inserted or deleted rows above
		// it: then its columns are taken to be where the read saw them (rows moved, not
		// columns), rather than every row looking like a row we never read.
		header := g.header
		if _, err := model.MapHeaders(tab.tc, header); err != nil {
			header = tab.header()
		}
		gotKeys := columnKeys(header)
		row := g.rows[rw.row]
		content := contentOf(gotKeys, row)
		if len(rw.want) == 0 && len(rw.edits) == 0 && len(content) == 0 {
			// A restore that leaves its row blank can't tell by the row whether it hit the
			// right one (every blank row reads alike): look for our value again next round;
			// if it is gone, it was put back.
			next = append(next, rw.strays...)
			continue
		}
		if equalContent(content, rw.want, nil) {
			// This row now holds, by right, what was just written: a later restore of this
			// round that lands on it must put that back, not what the read saw.
			if id := tab.identityOfContent(rw.want); id != "" {
				tab.verified[id] = rw.want
			}
			for _, i := range rw.edits {
				o := p.outcomes[i]
				st.final[i] = &o
				st.sent[i] = nil
			}
			continue
		}
		written := map[string]bool{}
		sameCols := true
		for _, c := range rw.cells {
			written[tab.keys[c.col]] = true
			if keyAt(gotKeys, c.col) != tab.keys[c.col] {
				sameCols = false
			}
		}
		if sameCols && equalContent(content, rw.want, written) {
			// The meant row, and someone wrote some of our cells right after us: theirs wins.
			for _, i := range rw.edits {
				o := p.outcomes[i]
				e := st.edits[i]
				for _, f := range sortedFields(e.Set) {
					col := tab.hm.Col(f)
					if now := cellAt(row, col); now != tab.value(rw.row, col) {
						o = outcome{conflict: &model.Conflict{Edit: e, Row: rw.row + 1, Field: f, Saw: e.Expect[f], Now: now,
							Reason: fmt.Sprintf("%s was changed by someone else just after triage wrote it (it is %q now)", f, now)}}
						break
					}
				}
				st.final[i] = &o
				st.sent[i] = nil
			}
			continue
		}
		// Another row is where the meant row was. What of ours is on it goes back to what it
		// held; the edits are located again.
		// Our earlier values still on this row (strays not yet put back) are known: the row
		// holds their restores by right.
		nowWritten := map[string]bool{}
		for _, c := range rw.cells {
			nowWritten[keyAt(gotKeys, c.col)] = true
		}
		open := openStrays(content, nowWritten, st.strays, next, rw.strays)
		prior, src, known := tab.prior(content, gotKeys, rw.cells, open)
		if !known && blankBut(content, gotKeys, rw.cells) {
			// A blank row (past the data, or inserted empty): it held nothing.
			known = true
		}
		var found []*stray
		restoredRow := append([]string(nil), row...)
		for _, c := range rw.cells {
			k := keyAt(gotKeys, c.col)
			if cellAt(row, c.col) != c.value || prior[k] == c.value {
				continue
			}
			found = append(found, &stray{wi: rw.wi, key: k, header: headerAt(header, c.col), ours: c.value,
				restore: prior[k], raw: tab.rawAt(src, k, prior[k]), unknownPrior: !known, at: content, row: rw.row + 1})
			for len(restoredRow) <= c.col {
				restoredRow = append(restoredRow, "")
			}
			restoredRow[c.col] = prior[k]
		}
		// The row's identity once restored: how it is found again if it changes otherwise
		// before the restore (a key of ours on it is not its identity).
		ident := ""
		if hm, err := model.MapHeaders(tab.tc, header); err == nil {
			for len(restoredRow) < len(header) {
				restoredRow = append(restoredRow, "")
			}
			// Earlier values of ours still on the row come off too (a key of ours on it is
			// not its identity).
			for c := range restoredRow {
				if v, ok := open[keyAt(gotKeys, c)]; ok && !nowWritten[keyAt(gotKeys, c)] {
					restoredRow[c] = v
				}
			}
			ident = model.RowIdentity(tab.tc, hm, restoredRow)
		}
		cols := st.touchedOf(rw.wi)
		for _, sr := range found {
			sr.ident, sr.written, sr.fresh = ident, cols, true
			if sr.unknownPrior {
				st.damaged = append(st.damaged, model.Damage{Tab: tab.tc.Name, Row: sr.row, ID: ident, Column: sr.header, Ours: sr.ours})
			}
		}
		next = append(next, found...)
		next = append(next, rw.strays...)
		for _, i := range rw.edits {
			st.sent[i] = nil
		}
	}
	st.strays = next
	return nil
}

// restorePlan is the write that puts back, at once, the values of ours the answer just
// verified showed on other rows (fresh strays), where that answer showed them: without it
// they would stay there until the next round's read and write. Its own answer is checked
// like any write's (a row that moved again becomes a stray, found by the next round's read).
// nil when there is nothing fresh to put back.
func (st *applyState) restorePlan(p *writePlan) *writePlan {
	rp := &writePlan{outcomes: make([]outcome, len(st.edits)), sent: make([]*inDoubt, len(st.edits)), views: p.views, restoreOnly: true}
	byRow := map[[2]int]*rowWrite{}
	for _, sr := range st.strays {
		var view *tabView
		if sr.wi < len(p.views) {
			view = p.views[sr.wi]
		}
		col := -1
		if view != nil {
			col = view.colOfKey(sr.key)
		}
		if !sr.fresh || col < 0 {
			rp.kept = append(rp.kept, sr)
			continue
		}
		k := [2]int{sr.wi, sr.row - 1}
		rw := byRow[k]
		if rw == nil {
			rw = &rowWrite{wi: sr.wi, row: sr.row - 1, want: maps.Clone(sr.at)}
			byRow[k] = rw
			rp.rows = append(rp.rows, rw)
		}
		rw.cells = append(rw.cells, cellWrite{col: col, field: view.fieldOf(col), value: sr.restore, raw: sr.raw})
		if sr.restore == "" {
			delete(rw.want, sr.key)
		} else {
			rw.want[sr.key] = sr.restore
		}
		rw.strays = append(rw.strays, sr)
	}
	if len(rp.rows) == 0 {
		return nil
	}
	for _, rw := range rp.rows {
		sort.Slice(rw.cells, func(a, b int) bool { return rw.cells[a].col < rw.cells[b].col })
	}
	sort.Slice(rp.rows, func(a, b int) bool {
		if rp.rows[a].wi != rp.rows[b].wi {
			return rp.rows[a].wi < rp.rows[b].wi
		}
		return rp.rows[a].row < rp.rows[b].row
	})
	return rp
}

// wrote reports whether a write of this Apply may have landed (answered, or failed with its
// answer lost).
func (st *applyState) wrote() bool { return st.round > 0 || len(st.failedPlans) > 0 }

// abort ends an Apply on an error. After a write that may have landed, the error says so and
// names every value of ours still known to be on a row that was not its target: nothing that
// depends on this write may report success, and the person must know what to put back.
func (st *applyState) abort(err error) (model.ApplyResult, error) {
	if !st.wrote() {
		return model.ApplyResult{}, err
	}
	var left []string
	for _, sr := range append(slices.Clone(st.strays), st.lost...) {
		if !sr.settled {
			left = append(left, sr.String())
		}
	}
	if len(left) == 0 {
		return model.ApplyResult{}, fmt.Errorf("%w (an earlier write of this call landed; refresh and check the rows you changed)", err)
	}
	return model.ApplyResult{}, fmt.Errorf("%w; an earlier write of this call landed on rows that were not its targets and was not all put back; fix by hand: %s", err, strings.Join(left, "; "))
}

// done reports whether every edit is decided and nothing of ours is left on another row.
func (st *applyState) done() bool {
	for _, o := range st.final {
		if o == nil {
			return false
		}
	}
	return len(st.strays) == 0 && len(st.lost) == 0
}

// finish ends an Apply whose last read planned no write (p.rows empty: every edit decided by
// it) or that ran out of rounds (why != nil): undecided edits become conflicts, and values
// of ours still on other rows make the result an error.
func (st *applyState) finish(p *writePlan, why error) (model.ApplyResult, error) {
	st.lost = append(st.lost, p.lost...)
	for i := range st.edits {
		if st.final[i] != nil {
			continue
		}
		o := p.outcomes[i]
		if why != nil {
			e := st.edits[i]
			row := 0
			if o.applied != nil {
				row = o.applied.Row
			}
			o = outcome{conflict: &model.Conflict{Edit: e, Row: row, Reason: fmt.Sprintf(
				"%v (rows moved between its read and its write %d times); not written, try again", why, st.round)}}
		}
		st.final[i] = &o
	}
	// Strays this last read found and would have restored are left; the others were put
	// back, found changed by someone else, or deleted with their row.
	left := slices.Clone(st.lost)
	for _, rw := range p.rows {
		left = append(left, rw.strays...)
	}
	if len(left) > 0 {
		msg := make([]string, len(left))
		for i, sr := range left {
			msg[i] = sr.String()
		}
		return model.ApplyResult{}, fmt.Errorf("rows kept moving while triage wrote, and it could not put back what it wrote on rows that were not the targets; fix by hand: %s", strings.Join(msg, "; "))
	}
	return st.result(), nil
}

// result lists the outcomes in the order of the edits.
func (st *applyState) result() model.ApplyResult {
	res := model.ApplyResult{Damaged: st.damaged}
	for i, o := range st.final {
		switch {
		case o == nil || o.missing:
			res.Missing = append(res.Missing, st.edits[i])
		case o.applied != nil:
			res.Applied = append(res.Applied, *o.applied)
		case o.conflict != nil:
			res.Conflicts = append(res.Conflicts, *o.conflict)
		default:
			res.Missing = append(res.Missing, st.edits[i])
		}
	}
	return res
}

// request builds the write: one updateCells per run of adjacent changed cells of a row, and
// the header row plus every written row asked back, as they are right after the write.
func (p *writePlan) request(work []*tabWork, ids []int64) *sheetsapi.BatchUpdateSpreadsheetRequest {
	req := &sheetsapi.BatchUpdateSpreadsheetRequest{IncludeSpreadsheetInResponse: true, ResponseIncludeGridData: true}
	rowsOf := make([][]int, len(work))
	for _, rw := range p.rows {
		rowsOf[rw.wi] = append(rowsOf[rw.wi], rw.row)
		for j := 0; j < len(rw.cells); {
			k := j + 1
			for k < len(rw.cells) && rw.cells[k].col == rw.cells[k-1].col+1 {
				k++
			}
			vals := make([]*sheetsapi.CellData, 0, k-j)
			for _, c := range rw.cells[j:k] {
				vals = append(vals, cellData(c.field, c.value, c.raw))
			}
			req.Requests = append(req.Requests, &sheetsapi.Request{UpdateCells: &sheetsapi.UpdateCellsRequest{
				Start:  &sheetsapi.GridCoordinate{SheetId: ids[rw.wi], RowIndex: int64(rw.row), ColumnIndex: int64(rw.cells[j].col)},
				Rows:   []*sheetsapi.RowData{{Values: vals}},
				Fields: "userEnteredValue",
			}})
			j = k
		}
	}
	for wi, rows := range rowsOf {
		if len(rows) == 0 {
			continue
		}
		q := quoteTab(work[wi].tc.Name) + "!"
		req.ResponseRanges = append(req.ResponseRanges, q+"1:1")
		sort.Ints(rows)
		for j := 0; j < len(rows); {
			k := j + 1
			for k < len(rows) && rows[k] == rows[k-1]+1 {
				k++
			}
			a, z := strconv.Itoa(rows[j]+1), strconv.Itoa(rows[k-1]+1)
			req.ResponseRanges = append(req.ResponseRanges, q+a+":"+z)
			j = k
		}
	}
	return req
}

// readTab is a tab as the write's answer shows it: the header row and the written rows.
type readTab struct {
	header []string
	rows   map[int][]string // 0-based row → cells
}

// readBack takes the written rows out of the write's answer. A tab written to but absent
// from the answer is an error: what the write hit can't be checked.
func readBack(resp *sheetsapi.BatchUpdateSpreadsheetResponse, work []*tabWork, ids []int64, p *writePlan) ([]*readTab, error) {
	out := make([]*readTab, len(work))
	if resp != nil && resp.UpdatedSpreadsheet != nil {
		for _, sh := range resp.UpdatedSpreadsheet.Sheets {
			if sh == nil || sh.Properties == nil {
				continue
			}
			wi := -1
			for i := range work {
				if ids[i] == sh.Properties.SheetId {
					wi = i
					break
				}
			}
			if wi < 0 {
				continue
			}
			rt := out[wi]
			if rt == nil {
				rt = &readTab{rows: map[int][]string{}}
				out[wi] = rt
			}
			for _, gd := range sh.Data {
				if gd == nil {
					continue
				}
				for j, rd := range gd.RowData {
					var cells []string
					if rd != nil {
						cells = make([]string, len(rd.Values))
						for c, cd := range rd.Values {
							if cd != nil {
								cells[c] = effectiveString(cd.EffectiveValue)
							}
						}
					}
					r := int(gd.StartRow) + j
					if r == 0 {
						rt.header = cells
					} else {
						rt.rows[r] = cells
					}
				}
			}
		}
	}
	for _, rw := range p.rows {
		if out[rw.wi] == nil {
			return nil, fmt.Errorf("the Sheets API's answer to the write does not show tab %q, so where the write landed can't be checked; refresh and look at the rows you changed", work[rw.wi].tc.Name)
		}
		// A row the answer leaves out reads as blank (Sheets trims trailing empty rows). A
		// row we just put a value in can't be blank: the answer is incomplete.
		if _, ok := out[rw.wi].rows[rw.row]; !ok {
			for _, c := range rw.cells {
				if c.value != "" {
					return nil, fmt.Errorf("the Sheets API's answer to the write does not show row %d of tab %q, which it just wrote, so where the write landed can't be checked; refresh and look at the rows you changed", rw.row+1, work[rw.wi].tc.Name)
				}
			}
		}
	}
	return out, nil
}

// effectiveString is a cell's value as values.get renders it with UNFORMATTED_VALUE (what the
// read of the same Apply compared), so the two can be compared.
func effectiveString(v *sheetsapi.ExtendedValue) string {
	switch {
	case v == nil:
		return ""
	case v.StringValue != nil:
		return *v.StringValue
	case v.NumberValue != nil:
		return model.CellString(*v.NumberValue)
	case v.BoolValue != nil:
		return model.CellString(*v.BoolValue)
	case v.ErrorValue != nil:
		return errorText[v.ErrorValue.Type]
	}
	return ""
}

// errorText is how a formula error reads in a values.get answer.
var errorText = map[string]string{
	"ERROR": "#ERROR!", "NULL_VALUE": "#NULL!", "DIVIDE_BY_ZERO": "#DIV/0!", "VALUE": "#VALUE!",
	"REF": "#REF!", "NAME": "#NAME?", "NUM": "#NUM!", "N_A": "#N/A", "LOADING": "Loading...",
}

// columnKeys names each column of a header row: its trimmed, lower-cased header when that is
// set and unique in the row, else its position ("#4"). Rows are compared by these names, so
// a column moved between our read and our write is still compared with itself.
func columnKeys(header []string) []string {
	keys := make([]string, len(header))
	seen := map[string]int{}
	for i, h := range header {
		k := strings.ToLower(strings.TrimSpace(h))
		keys[i] = k
		if k != "" {
			seen[k]++
		}
	}
	for i, k := range keys {
		if k == "" || seen[k] > 1 {
			keys[i] = "#" + strconv.Itoa(i)
		}
	}
	return keys
}

// keyAt is the column key of column c (past the header: its position).
func keyAt(keys []string, c int) string {
	if c >= 0 && c < len(keys) {
		return keys[c]
	}
	return "#" + strconv.Itoa(c)
}

func headerAt(header []string, c int) string {
	if c >= 0 && c < len(header) && strings.TrimSpace(header[c]) != "" {
		return strconv.Quote(strings.TrimSpace(header[c]))
	}
	return model.ColumnLetter(c)
}

func cellAt(row []string, c int) string {
	if c >= 0 && c < len(row) {
		return row[c]
	}
	return ""
}

// contentOf is a row by column key, empty cells left out.
func contentOf(keys []string, row []string) map[string]string {
	m := make(map[string]string, len(row))
	for c, v := range row {
		if v != "" {
			m[keyAt(keys, c)] = v
		}
	}
	return m
}

// equalContent reports whether two rows hold the same values in every column but those in
// skip.
func equalContent(a, b map[string]string, skip map[string]bool) bool {
	for k, v := range a {
		if !skip[k] && b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if !skip[k] && a[k] != v {
			return false
		}
	}
	return true
}

// rowContent is row r as read (not counting pending writes), by column key.
func (t *tabView) rowContent(r int) map[string]string {
	if r < 0 || r >= len(t.rows) {
		return map[string]string{}
	}
	raw := t.rows[r]
	cells := make([]string, len(raw))
	for c, v := range raw {
		cells[c] = model.CellString(v)
	}
	return contentOf(t.keys, cells)
}

// priorContent is row r as it holds by right: what this round's write was verified to
// leave there, else as read, with our values from earlier rounds that this round restores
// put back.
func (t *tabView) priorContent(r int) map[string]string {
	m := t.overlay(r, t.restored)
	// By the identity the row has once our values are off it (a key of ours on it is not
	// its identity).
	if len(t.verified) > 0 {
		if v, ok := t.verified[t.identityOfContent(m)]; ok {
			return v
		}
	}
	return m
}

// contentAfter is row r as it must read once this round's writes land, by column key.
func (t *tabView) contentAfter(r int) map[string]string { return t.overlay(r, t.pending) }

// overlay is row r as read, by column key, with the cells of writes (of row r) put over it.
func (t *tabView) overlay(r int, writes map[cell]string) map[string]string {
	m := t.rowContent(r)
	for c, v := range writes {
		if c.row != r {
			continue
		}
		if v == "" {
			delete(m, keyAt(t.keys, c.col))
		} else {
			m[keyAt(t.keys, c.col)] = v
		}
	}
	return m
}

// colOfKey is the column a column key names in this read, or -1.
func (t *tabView) colOfKey(k string) int {
	for c, kk := range t.keys {
		if kk == k {
			return c
		}
	}
	if strings.HasPrefix(k, "#") {
		if c, err := strconv.Atoi(k[1:]); err == nil && c >= len(t.keys) {
			return c
		}
	}
	return -1
}

// prior finds, in this round's read, the row that is now where our write landed: the one
// that read like it, before this Apply touched it, in every column our write didn't touch.
// It returns that row (by column key) and whether exactly one row (or several that agree on
// the written columns) matched. No match means the row appeared after our read: it held
// nothing we know of.
func (t *tabView) prior(now map[string]string, nowKeys []string, cells []cellWrite, open map[string]string) (map[string]string, int, bool) {
	skip := map[string]bool{}
	for _, c := range cells {
		skip[keyAt(nowKeys, c.col)] = true
	}
	// Cells that hold a value of ours from an earlier write (open strays of this row) are
	// compared with nothing: what the row holds there by right is the stray's restore.
	loose := maps.Clone(skip)
	for k := range open {
		loose[k] = true
	}
	var found []int
	for r := 1; r < len(t.rows); r++ {
		if t.readsLike(r, now, loose) {
			found = append(found, r)
		}
	}
	if len(found) == 0 {
		if len(open) == 0 {
			return map[string]string{}, -1, false
		}
		// Known only through our own strays on it.
		prior := maps.Clone(now)
		maps.Copy(prior, open)
		for k := range skip {
			if _, ok := open[k]; !ok {
				return map[string]string{}, -1, false
			}
		}
		return prior, -1, true
	}
	first := maps.Clone(t.priorContent(found[0]))
	for _, r := range found[1:] {
		other := t.priorContent(r)
		for k := range skip {
			if other[k] != first[k] {
				return map[string]string{}, -1, false
			}
		}
	}
	maps.Copy(first, open)
	return first, found[0], true
}

// openStrays are the restores still owed to the row that now reads as content (column key
// → value it holds by right), from strays not yet put back: a stray is that row's when the
// row reads as the stray left it in every column but those written since (by that stray's
// write or by the write just checked, whose columns are in skip). Rows are told apart by
// content, not identity: a key of ours on a row is not that row's identity.
func openStrays(content map[string]string, skip map[string]bool, lists ...[]*stray) map[string]string {
	out := map[string]string{}
	for _, l := range lists {
		for _, sr := range l {
			if sr.settled {
				continue
			}
			ignore := maps.Clone(skip)
			maps.Copy(ignore, sr.written)
			ignore[sr.key] = true
			if equalContent(sr.at, content, ignore) && content[sr.key] == sr.ours {
				out[sr.key] = sr.restore
			}
		}
	}
	return out
}

// locate finds a stray's row in this read. Without byIdentity: a row that reads exactly as
// our write left it and that no other restore of this round took. With it: the one row whose identity, with this round's
// restores applied and our value in the stray's cell put back, is the stray's. -1 when there
// is none (by identity: the row was deleted, or changed past recognition, and is another
// writer's now); ok is false when several rows match and the stray can't be placed (it is
// reported).
func (t *tabView) locate(sr *stray, byIdentity bool) (row int, ok bool) {
	var found []int
	if !byIdentity {
		for r := 1; r < len(t.rows); r++ {
			if _, busy := t.restored[cell{r, t.colOfKey(sr.key)}]; !busy && equalContent(t.rowContent(r), sr.at, nil) {
				found = append(found, r)
			}
		}
		// Rows that read exactly alike are interchangeable (two blank rows our write put the
		// same value on): each stray takes the first one no other stray of the column took.
		if len(found) > 0 {
			return found[0], true
		}
		return -1, true
	}
	// The row as our write left it, but for the columns our writes touched there since (other
	// strays of the same row partly put back), still holding our value in this cell.
	col := t.colOfKey(sr.key)
	for r := 1; r < len(t.rows); r++ {
		if _, busy := t.restored[cell{r, col}]; !busy && col >= 0 && t.read(r, col) == sr.ours &&
			equalContent(t.rowContent(r), sr.at, sr.written) {
			found = append(found, r)
		}
	}
	if len(found) == 1 || (len(found) > 1 && sr.ident == "") {
		return found[0], true
	}
	found = found[:0]
	if sr.ident == "" || col < 0 {
		return -1, true
	}
	// By identity: a row that holds our value in the cell (no other row has anything of this
	// stray to put back), and only where that cell is not part of the identity (a status,
	// not a key): with our value and with the restore in it, the row is the stray's. Putting
	// a key back would give any row the stray's identity.
	for r := 1; r < len(t.rows); r++ {
		if _, busy := t.restored[cell{r, col}]; busy || t.read(r, col) != sr.ours {
			continue
		}
		cells := make([]string, max(len(t.rows[r]), len(t.hm.Headers), col+1))
		for c := range cells {
			cells[c] = t.value(r, c)
		}
		cells[col] = sr.ours
		held := model.RowIdentity(t.tc, t.hm, cells)
		cells[col] = sr.restore
		if held == sr.ident && model.RowIdentity(t.tc, t.hm, cells) == sr.ident {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return -1, true
	case 1:
		return found[0], true
	}
	return -1, false
}

// sheetIDs returns the sheetId of every tab of an Apply (updateCells addresses a tab by ID):
// from the cache Load fills, else from one spreadsheets.get.
func (s *Store) sheetIDs(ctx context.Context, op string, b *budget, work []*tabWork) ([]int64, error) {
	if ids := s.cachedSheetIDs(work); ids != nil {
		return ids, nil
	}
	meta, err := s.getMeta(ctx, op, b)
	if err != nil {
		return nil, err
	}
	s.rememberSheetIDs(meta)
	// A tab not in the spreadsheet any more gets -1: the read finds it gone too, and nothing
	// is written to it.
	ids := make([]int64, len(work))
	for i, w := range work {
		ids[i] = -1
		if sh := findSheet(meta, w.tc.Name); sh != nil && sh.Properties != nil {
			ids[i] = sh.Properties.SheetId
		}
	}
	return ids, nil
}

// cachedSheetIDs returns the cached sheetId of every tab of work, or nil if one is unknown.
func (s *Store) cachedSheetIDs(work []*tabWork) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, len(work))
	for i, w := range work {
		id, ok := s.sheetIDCache[tabKey(w.tc.Name)]
		if !ok {
			return nil
		}
		ids[i] = id
	}
	return ids
}

// rememberSheetIDs caches every tab's sheetId by name.
func (s *Store) rememberSheetIDs(meta *sheetsapi.Spreadsheet) {
	if meta == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sheetIDCache == nil {
		s.sheetIDCache = map[string]int64{}
	}
	for _, sh := range meta.Sheets {
		if sh != nil && sh.Properties != nil {
			s.sheetIDCache[tabKey(sh.Properties.Title)] = sh.Properties.SheetId
		}
	}
}

func (s *Store) forgetSheetIDs() {
	s.mu.Lock()
	s.sheetIDCache = nil
	s.mu.Unlock()
}

// isNoGrid reports the 400 an updateCells gets for a sheetId that no longer exists.
func isNoGrid(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == 400 && strings.Contains(gerr.Message+gerr.Body, "No grid with id")
}
