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
	"time"

	"github.com/triage-dev/triage/model"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// Apply writes edits by row identity (invariant 1). When nothing moves it sends two requests
// for any number of edits and tabs: one values:batchGet of every tab involved (locate and
// verify), then one spreadsheets.batchUpdate of updateCells requests that also returns, from
// the same atomic request, what every written row holds right after the write.
//
// For each edit, row 1 is mapped afresh (columns may have moved since the load), the row
// whose identity (model.RowIdentity: the ID cell, or a dead letter's effective key) equals
// Edit.ID is found, and every Expect field is compared with the cell's current value
// (model.CellString). An edit whose ID is gone is reported in Missing; one whose cell changed,
// whose ID is on two rows, or which sets a column the tab no longer has is reported in
// Conflicts, and nothing of it is written. Every edit lands in exactly one of Applied,
// Conflicts and Missing. Only cells whose value changes are written: an edit whose Set cells
// already hold their values is applied with nothing written (and no audit stamp). A key cell
// that holds a value is never written (invariant 3): setting it to another value is a
// conflict. Where the tab has triaged_by / triaged_at columns, every edit that writes also
// sets them (the actor given to ctx by WithActor, else Options.Actor, and this call's stamp: the current time to the millisecond,
// distinct for every Apply of the Store; see Store.stamp). Text is written as
// userEnteredValue.stringValue, which Sheets stores as text and never parses (the RAW of
// invariant 2); only attempts (and a restored number) is written as a number.
//
// Between the read and the write someone may sort, insert or delete rows: the write's cell
// addresses are row numbers, and the Sheets API has no compare-and-set. So the write asks
// for the header row and every written row back (includeSpreadsheetInResponse,
// responseRanges, responseIncludeGridData), and each written row is checked whole against
// what it was meant to hold. A row that holds it is done. A row that is not the one meant
// (its other cells differ: another row moved there) had our values put on it (a "stray").
// They go back at once, in a write sent as soon as the answer is read, to where that answer
// showed them, with what the row held before (found by the rest of the row in this round's
// read, with its type: a date serial stays a number); that write is checked the same way.
// Then the edits meant for those rows are located and verified again in the next round.
// Rows are told apart by their content outside the columns this Apply writes, not by
// identity alone: a key of ours on a row is not that row's identity. A row inserted between
// the read and the write has no known prior value: our value is cleared from it and the cell
// is reported in ApplyResult.Damaged (a person must look). After maxWriteRounds rounds an
// edit still unplaced is a conflict ("the sheet kept changing"); our values still on other
// rows are put back for up to maxRestoreRounds more rounds, waiting between them; one that
// can't be is an error naming the row and column, so nothing depending on this write
// reports success. A wrong row holds our value for one round trip unless rows move again
// before the write that puts it back.
// Several edits of one row are applied in order against the sheet as read plus the earlier
// edits of the same call: a later edit's Expect sees an earlier edit's Set, and each cell is
// written once, with its last value. Rows are located against the sheet as read, so an edit
// that changes an ID cell does not move the identity for later edits of the same call.
//
// When the write fails with a retryable error (429, 5xx, network), Apply backs off and starts
// over: it reads the tabs again, locates and verifies every edit again, and writes at the
// rows it finds then. In that re-verify an edit that was in the failed write and whose Set
// cells already hold the values that write put there counts as applied (the write landed
// and only its answer was lost) and is not written again; an edit whose Expect still holds
// is written again at its current row; any other is a conflict. Every request of one Apply,
// reads included, counts against one RetryPolicy budget, so the whole call makes at most
// MaxAttempts failed sends.
//
// The failed write may have landed and then been undone during the backoff: another writer
// set a cell back to the value Expect saw, deliberately. The row then looks exactly like one
// the write never reached, and writing again would overwrite that change. Where the tab has
// a triaged_at column, this call's stamp, which the failed write put there, tells them
// apart. A row whose triaged_at holds the stamp but whose Set cells don't hold the values
// sent was changed after the write landed: a conflict ("changed by someone else after
// triage's write landed (its answer was lost)"). A row whose triaged_at is neither the stamp
// nor what it held before the write was written since by someone else (another triage
// stamps its own time): a conflict on triaged_at, because that write may have come after
// ours landed. Only when triaged_at is as it was before the write (the write did not land)
// does the Expect check decide. Where the tab has no triaged_at column, nothing in the row
// says whether the write landed, so the Expect check decides, and a landed write undone
// during the backoff is written again (TestApplyRetryLandedThenRevertedWithoutMarker).
// Adding triaged_by / triaged_at columns to the tab closes it. A failed write's answer is
// lost, so the check of where it landed can't be made for it; with a triaged_at column, a
// row that is not a target but holds this call's stamp was hit by it and is restored like
// any other wrong row.
//
// The marker errs towards conflicts: if the failed write did not land and someone else wrote
// the row during the backoff (changing triaged_at), even in cells the edit doesn't touch,
// the edit is a conflict although writing it again would have been safe; applying again
// writes it.
//
// A request that fails for good returns the error and no result: nothing is reported as
// written, although a write that failed with a lost answer may have landed (applying the
// same edits again then reports conflicts showing the new values). A read-only store returns
// ErrReadOnly and sends nothing.
func (s *Store) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	op := fmt.Sprintf("write %d edit", len(edits))
	if len(edits) != 1 {
		op += "s"
	}
	if s.readOnly {
		return model.ApplyResult{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	if len(edits) == 0 {
		return model.ApplyResult{}, nil
	}

	// Group edits by configured tab, in order of first appearance.
	var work []*tabWork
	byName := map[string]*tabWork{}
	for i, e := range edits {
		tc, ok := s.tabConfig(e.Tab)
		if !ok {
			return model.ApplyResult{}, fmt.Errorf("%s: tab %q is not a configured tab (configured: %s); nothing was written", op, e.Tab, s.tabNames())
		}
		w := byName[tc.Name]
		if w == nil {
			w = &tabWork{tc: tc}
			byName[tc.Name] = w
			work = append(work, w)
		}
		w.edits = append(w.edits, i)
	}

	// The person is this call's (WithActor) where one is given: one Store serves every
	// session of `triage serve`, each write recording its own person.
	actor := s.actor
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		actor = a
	}
	b := &budget{}
	// One stamp for every round: a write retried after a failure is the same write. It also
	// marks the rows this call wrote (see stamp).
	now := s.stamp()
	st := &applyState{
		edits: edits,
		final: make([]*outcome, len(edits)),
		sent:  make([]*inDoubt, len(edits)),
	}
	for round := 1; ; round++ {
		if round > maxWriteRounds+1 && len(st.strays) > 0 {
			// Past the bound only our values on other rows are still being put back. Someone
			// is sorting or inserting without pause: give them a moment (full jitter, as for
			// a retry), then look again.
			if err := s.retry.Sleep(ctx, jitter(s.retry.Backoff(round-maxWriteRounds-1))); err != nil {
				return st.finish(&writePlan{}, fmt.Errorf("%s: %w", op, err))
			}
		}
		// Request 1: read every tab involved.
		rowsOf, gone, err := s.readForWrite(ctx, op, b, work)
		if err != nil {
			return st.abort(err)
		}
		// Past maxWriteRounds, edits are no longer located again (they become conflicts), but
		// values of ours on other rows are still put back, for a few more rounds.
		stopEdits := round > maxWriteRounds
		p, err := planWrite(op, st, work, rowsOf, gone, actor, now, stopEdits)
		if err != nil {
			return st.abort(err)
		}
		var why error
		if stopEdits {
			why = errors.New("the sheet kept changing under triage's writes")
		}
		if len(p.rows) == 0 || round > maxWriteRounds+maxRestoreRounds {
			return st.finish(p, why)
		}

		// Request 2: write every changed cell, once, and read the written rows back. A store
		// that never loaded doesn't know the tabs' sheetIds yet (updateCells needs them): it
		// asks once.
		ids, err := s.sheetIDs(ctx, op, b, work)
		if err != nil {
			return st.abort(err)
		}
		if err := ctx.Err(); err != nil {
			return st.abort(fmt.Errorf("%s: %w", op, err))
		}
		resp, err := s.svc.Spreadsheets.BatchUpdate(s.id, p.request(work, ids)).
			Fields(writeResponseFields).Context(ctx).Do()
		if err != nil {
			if isNoGrid(err) {
				// The tab was deleted and made again since its ID was cached: ask again, and
				// locate again (this counts as a round, so it can't loop).
				s.forgetSheetIDs()
				continue
			}
			if ferr := s.backoff(ctx, op, b, err); ferr != nil {
				return st.abort(ferr)
			}
			st.failed(p)
			continue
		}
		b.answered()
		if err := st.verify(p, work, ids, resp); err != nil {
			return st.abort(fmt.Errorf("%s: %w", op, err))
		}
		// Values of ours on other rows go back at once, where the answer showed them, not
		// after the next read: a wrong row holds one for one round trip. If this write fails,
		// the next round finds them by reading (they may or may not have gone back).
		if rp := st.restorePlan(p); rp != nil && ctx.Err() == nil {
			resp, err := s.svc.Spreadsheets.BatchUpdate(s.id, rp.request(work, ids)).
				Fields(writeResponseFields).Context(ctx).Do()
			if err == nil {
				if err := st.verify(rp, work, ids, resp); err != nil {
					return st.abort(fmt.Errorf("%s: %w", op, err))
				}
			}
		}
		if st.done() {
			return st.result(), nil
		}
	}
}

// maxWriteRounds bounds the write rounds of one Apply: the first write, then repairs (our
// values restored on rows that were not the targets, and the edits located again) while
// someone keeps moving rows between our read and our write.
const maxWriteRounds = 4

// maxRestoreRounds bounds the rounds after maxWriteRounds that only put back our values;
// they wait between them (see Apply).
const maxRestoreRounds = 8

// writeResponseFields keeps the write's answer to what the check needs: the written rows'
// values, as they are right after the write.
const writeResponseFields = "updatedSpreadsheet(sheets(properties(sheetId,title),data(startRow,rowData(values(effectiveValue)))))"

// stampLayout is RFC 3339 in UTC with milliseconds, trailing zeros dropped (so a whole
// second reads as model.FormatTime writes it); model.ParseTime reads it back.
const stampLayout = "2006-01-02T15:04:05.999Z07:00"

// stamp returns the triaged_at value of one Apply: the store's clock to the millisecond,
// moved on by a millisecond past the previous Apply's stamp when it would not be later
// (two Applies in one millisecond, a clock that stepped back, a fixed test clock). No two
// Applies of one Store share a stamp, so a row holding an Apply's stamp was written by that
// Apply (see Apply). Milliseconds rather than the seconds model.FormatTime gives because
// several Applies a second are ordinary (a person working through rows, each key one
// Apply), and a stamp shared with the previous Apply would read as ours; rather than
// nanoseconds because a person reads the cell.
//
// Uniqueness holds within a Store. Another Store or process writing the same row in the
// same millisecond could share a stamp; the only cost is a spurious conflict, since the
// stamp only ever turns a rewrite into a conflict, never the reverse.
func (s *Store) stamp() string {
	t := s.now().UTC().Truncate(time.Millisecond)
	s.stampMu.Lock()
	if !t.After(s.lastStamp) {
		t = s.lastStamp.Add(time.Millisecond)
	}
	s.lastStamp = t
	s.stampMu.Unlock()
	return t.Format(stampLayout)
}

// tabWork is one configured tab of an Apply and the indexes of its edits, in order.
type tabWork struct {
	tc    model.TabConfig
	edits []int
}

// readForWrite reads every tab of an Apply in one values:batchGet. rowsOf[i] are the rows of
// work[i]; gone[i] says that tab no longer exists (deleted or renamed since the load), in
// which case its edits are reported missing and the other tabs are read in one more request.
func (s *Store) readForWrite(ctx context.Context, op string, b *budget, work []*tabWork) (rowsOf [][][]any, gone []bool, err error) {
	ranges := make([]string, len(work))
	for i, w := range work {
		ranges[i] = quoteTab(w.tc.Name)
	}
	rowsOf = make([][][]any, len(work))
	gone = make([]bool, len(work))
	vrs, err := s.batchGet(ctx, op, b, ranges)
	switch {
	case err == nil:
		for i := range work {
			if vrs[i] != nil {
				rowsOf[i] = vrs[i].Values
			}
		}
	case isParseRange(err):
		// A tab was deleted or renamed since the load: find which, read the others. Their
		// edits are reported missing (their rows are nowhere to be written).
		meta, merr := s.getMeta(ctx, op, b)
		if merr != nil {
			return nil, nil, merr
		}
		var again []string
		var idx []int
		for i, w := range work {
			sh := findSheet(meta, w.tc.Name)
			if sh == nil {
				gone[i] = true
				continue
			}
			again = append(again, quoteTab(sh.Properties.Title))
			idx = append(idx, i)
		}
		if len(again) > 0 {
			vrs2, err := s.batchGet(ctx, op, b, again)
			if err != nil {
				return nil, nil, err
			}
			for j, i := range idx {
				if vrs2[j] != nil {
					rowsOf[i] = vrs2[j].Values
				}
			}
		}
	default:
		return nil, nil, err
	}
	return rowsOf, gone, nil
}

// outcome is what became of one edit in one round of an Apply.
type outcome struct {
	applied  *model.Applied
	conflict *model.Conflict
	missing  bool
}

// inDoubt is what a write that failed put, or would have put, in one edit's row: it may
// have landed (only its answer was lost) or not.
type inDoubt struct {
	// set is the value written to each of the edit's Set cells: the final value of the
	// cell, which for several edits of one row is the last edit's.
	set map[model.Field]string
	// stamped says the write put this Apply's stamp in the row's triaged_at cell, which
	// held before (as read just before the write).
	stamped bool
	before  string
}

// writePlan is one round of an Apply: the outcome of every undecided edit against the sheet
// as just read, and the rows to write, each with what it must hold once the write lands.
type writePlan struct {
	outcomes []outcome
	rows     []*rowWrite
	sent     []*inDoubt
	// views are the tabs as read this round (nil for a tab that is gone), by work index.
	views []*tabView
	// lost are strays that could not be found again this round (see applyState.strays).
	lost []*stray
	// restoreOnly marks a plan of restores only (applyState.restorePlan); kept are the
	// strays it leaves for the next round.
	restoreOnly bool
	kept        []*stray
	// stopEdits marks a plan past maxWriteRounds: it writes restores only, and decides no
	// edit (those left become conflicts in applyState.finish).
	stopEdits bool
}

// rowWrite is the write of one row in one round.
type rowWrite struct {
	wi    int // index in work
	row   int // 0-based (0 = header row)
	cells []cellWrite
	// want is the whole row as it must read right after the write, by column key.
	want map[string]string
	// keys of the written cells' columns, by column index.
	edits  []int    // edits with a cell in this row
	strays []*stray // our values from an earlier round restored in this row
}

// cellWrite is one cell to write.
type cellWrite struct {
	col   int
	field model.Field
	value string
	// raw, when set, is the value as read (a number, a bool, text) that value stands for:
	// a restore puts a cell back with its own type, not as text.
	raw any
}

// planWrite locates and verifies every undecided edit against rowsOf (see Apply), restores
// the strays it can find, and collects one write per changed cell. st.sent[i], when set, is
// what an earlier failed write put in edit i's row: an edit whose row already holds its Set
// values is applied, with nothing to write.
func planWrite(op string, st *applyState, work []*tabWork, rowsOf [][][]any, gone []bool, actor, now string, stopEdits bool) (*writePlan, error) {
	edits := st.edits
	p := &writePlan{outcomes: make([]outcome, len(edits)), sent: make([]*inDoubt, len(edits)), views: make([]*tabView, len(work)), stopEdits: stopEdits}
	for wi, w := range work {
		var pending []int
		for _, i := range w.edits {
			if st.final[i] == nil {
				pending = append(pending, i)
			}
		}
		strays := st.straysOf(wi)
		if gone[wi] {
			for _, i := range pending {
				p.outcomes[i] = outcome{missing: true}
			}
			// The tab is gone, and with it any value of ours left in it.
			continue
		}
		if len(pending) == 0 && len(strays) == 0 {
			continue
		}
		tab, err := newTabView(w.tc, rowsOf[wi])
		if err != nil {
			if st.wrote() {
				return nil, fmt.Errorf("%s: can't locate rows in tab %q: %w", op, w.tc.Name, err)
			}
			return nil, fmt.Errorf("%s: can't locate rows in tab %q: %w; nothing was written", op, w.tc.Name, err)
		}
		p.views[wi] = tab
		wanted := make(map[string]bool, len(pending)+len(strays))
		for _, i := range pending {
			wanted[edits[i].ID] = true
		}
		if len(st.failedPlans) > 0 {
			// Rows of decided edits hold our stamp too: stampedStrays must know them.
			for _, i := range w.edits {
				wanted[edits[i].ID] = true
			}
		}
		for _, sr := range strays {
			if sr.ident != "" {
				wanted[sr.ident] = true
			}
		}
		tab.index(wanted)

		// Restores first: an edit's Expect must see a cell as it was before our stray value.
		owners := map[int]*rowWrite{}
		rowOf := func(r int) *rowWrite {
			rw := owners[r]
			if rw == nil {
				rw = &rowWrite{wi: wi, row: r}
				owners[r] = rw
			}
			return rw
		}
		// Two passes: strays whose row reads exactly as our write left it, then (with those
		// restores pending, so a value of ours on one row doesn't make it look like another)
		// the rest by identity.
		place := func(sr *stray, r int) {
			col := tab.colOfKey(sr.key)
			if col < 0 || tab.read(r, col) != sr.ours {
				// Someone (or another write of ours) wrote the cell since, or removed the
				// column: nothing of this stray is there any more.
				sr.settled = true
				return
			}
			tab.putRestore(r, col, sr)
			rw := rowOf(r)
			rw.strays = append(rw.strays, sr)
		}
		var second []*stray
		for _, sr := range strays {
			if r, _ := tab.locate(sr, false); r >= 0 {
				place(sr, r)
			} else {
				second = append(second, sr)
			}
		}
		// By identity, until nothing more can be placed: each restore placed takes our value
		// off its row, which can make another stray's row the only one left with its identity.
		for progress := true; progress && len(second) > 0; {
			progress = false
			var again []*stray
			for _, sr := range second {
				r, ok := tab.locate(sr, true)
				switch {
				case r >= 0:
					place(sr, r)
					progress = true
				case ok:
					sr.settled = true // its row is gone
					progress = true
				default:
					again = append(again, sr)
				}
			}
			second = again
		}
		p.lost = append(p.lost, second...)
		// A write whose answer was lost may have landed on rows that were not its targets; its
		// stamp in triaged_at tells them (see stampedStrays).
		if len(st.failedPlans) > 0 {
			for _, sr := range tab.stampedStrays(wi, now, st.failedPlans, edits, w.edits, st.sent, st.final) {
				touched := st.touchedOf(wi)
				maps.Copy(touched, sr.written)
				sr.written = touched
				r, col := sr.row-1, tab.colOfKey(sr.key)
				if sr.unknownPrior {
					st.damaged = append(st.damaged, model.Damage{Tab: w.tc.Name, Row: sr.row, ID: sr.ident, Column: sr.header, Ours: sr.ours})
				}
				tab.putRestore(r, col, sr)
				rw := rowOf(r)
				rw.strays = append(rw.strays, sr)
				strays = append(strays, sr)
			}
		}
		if len(strays) > 0 {
			tab.index(wanted)
		}
		if stopEdits {
			// Past the bound: only restores are still written; every undecided edit is a
			// conflict (see applyState.finish).
			pending = nil
		}
		var writing []int
		for _, i := range pending {
			applied, conflict, missing, write := tab.apply(edits[i], st.sent[i], actor, now)
			p.outcomes[i] = outcome{applied: applied, conflict: conflict, missing: missing}
			if write {
				writing = append(writing, i)
				rw := rowOf(applied.Row - 1)
				rw.edits = append(rw.edits, i)
			}
		}
		// Only now is every pending cell final: keep the cells whose value changes.
		for _, c := range tab.order {
			v := tab.pending[c]
			if v == tab.read(c.row, c.col) {
				continue
			}
			rw := rowOf(c.row)
			rw.cells = append(rw.cells, cellWrite{col: c.col, field: tab.fieldOf(c.col), value: v, raw: tab.pendingRaw[c]})
		}
		rows := make([]int, 0, len(owners))
		for r, rw := range owners {
			if len(rw.cells) > 0 {
				rows = append(rows, r)
				continue
			}
			// Nothing to write on this row: a restore here was overridden by an edit with the
			// value the cell already holds, so that value is the edit's now (it is decided:
			// applied), not a stray of ours.
			for c := range tab.restored {
				if c.row == r {
					delete(tab.restored, c)
				}
			}
			for _, sr := range rw.strays {
				sr.settled = true
			}
		}
		sort.Ints(rows)
		for _, r := range rows {
			rw := owners[r]
			sort.Slice(rw.cells, func(a, b int) bool { return rw.cells[a].col < rw.cells[b].col })
			rw.want = tab.contentAfter(r)
			p.rows = append(p.rows, rw)
		}
		// An edit whose row ends up with nothing to write (its values were already there)
		// is applied as is.
		atCol := tab.hm.Col(model.FTriagedAt)
		for _, i := range writing {
			row := p.outcomes[i].applied.Row - 1
			if rw := owners[row]; rw == nil || len(rw.cells) == 0 {
				continue
			}
			d := &inDoubt{set: make(map[model.Field]string, len(edits[i].Set))}
			for f := range edits[i].Set {
				d.set[f] = tab.value(row, tab.hm.Col(f))
			}
			// An edit (of this row) that sets triaged_at itself leaves no stamp.
			if atCol >= 0 {
				if v, ok := tab.pending[cell{row, atCol}]; ok && v == now {
					d.stamped, d.before = true, tab.read(row, atCol)
				}
			}
			p.sent[i] = d
		}
	}
	return p, nil
}

func (s *Store) tabNames() string {
	q := make([]string, len(s.tabs))
	for i, tc := range s.tabs {
		q[i] = strconv.Quote(tc.Name)
	}
	if len(q) == 0 {
		return "none"
	}
	return strings.Join(q, ", ")
}

// cell is a 0-based position in a tab's rows (row 0 = the header row).
type cell struct{ row, col int }

// tabView is one tab as read at write time, plus the writes of the current Apply.
type tabView struct {
	tc   model.TabConfig
	hm   model.HeaderMap
	rows [][]any
	keys []string // column keys of the header (see columnKeys)
	// restored are this round's restores of our values from an earlier round: what those
	// cells held before this Apply touched them.
	restored map[cell]string
	// verified are rows this round's writes were verified to have written, by identity
	// (identity → content), so a restore landing on one afterwards knows what it holds by
	// right.
	verified map[string]map[string]string
	ids      map[string][]int // identity → 0-based row indexes
	pending  map[cell]string  // cell → value to write (also the overlay reads see)
	order    []cell           // pending cells in first-write order
	// pendingRaw are restores' values with their type (see cellWrite.raw).
	pendingRaw map[cell]any
	// twins caches rows by content outside a set of columns (see twinOf).
	twins map[string]map[string][]int
}

func newTabView(tc model.TabConfig, rows [][]any) (*tabView, error) {
	var header []string
	if len(rows) > 0 {
		header = make([]string, len(rows[0]))
		for i, v := range rows[0] {
			header[i] = strings.TrimSpace(model.CellString(v))
		}
	}
	hm, err := model.MapHeaders(tc, header)
	if err != nil {
		return nil, err
	}
	return &tabView{tc: tc, hm: hm, rows: rows, keys: columnKeys(header), ids: map[string][]int{}, pending: map[cell]string{}, pendingRaw: map[cell]any{}, restored: map[cell]string{}, verified: map[string]map[string]string{}}, nil
}

// index records the rows of every wanted identity, as the rows read with this round's
// pending writes (restores of our values from an earlier round) applied: a key of ours still
// on another row must not make that row look like the key's own.
func (t *tabView) index(wanted map[string]bool) {
	t.ids = map[string][]int{}
	width := len(t.hm.Headers)
	for r := 1; r < len(t.rows); r++ {
		raw := t.rows[r]
		w := max(width, len(raw))
		cells := make([]string, w)
		empty := true
		for c := range cells {
			cells[c] = t.value(r, c)
			if cells[c] != "" {
				empty = false
			}
		}
		if empty {
			continue
		}
		id := model.RowIdentity(t.tc, t.hm, cells)
		if id != "" && wanted[id] {
			t.ids[id] = append(t.ids[id], r)
		}
	}
}

// value is a cell's current text: this Apply's pending write, else what was read.
func (t *tabView) value(row, col int) string {
	if v, ok := t.pending[cell{row, col}]; ok {
		return v
	}
	return t.read(row, col)
}

// read is a cell's text as read, not counting this round's pending writes.
func (t *tabView) read(row, col int) string {
	if row < len(t.rows) && col >= 0 && col < len(t.rows[row]) {
		return model.CellString(t.rows[row][col])
	}
	return ""
}

func (t *tabView) put(row, col int, v string) {
	c := cell{row, col}
	if _, ok := t.pending[c]; !ok {
		t.order = append(t.order, c)
	}
	t.pending[c] = v
	delete(t.pendingRaw, c)
}

// putRestore queues putting a stray's cell back, with the restored value's own type.
func (t *tabView) putRestore(row, col int, sr *stray) {
	t.put(row, col, sr.restore)
	if sr.raw != nil {
		t.pendingRaw[cell{row, col}] = sr.raw
	}
	t.restored[cell{row, col}] = sr.restore
}

// fieldOf returns the schema field of a column, or "".
func (t *tabView) fieldOf(col int) model.Field {
	for f, c := range t.hm.Index {
		if c == col {
			return f
		}
	}
	return ""
}

func (t *tabView) identityField() model.Field {
	if t.tc.Role == model.RoleDeadLetter {
		return model.FKey
	}
	return model.FID
}

func sortedFields(m map[model.Field]string) []model.Field {
	fs := make([]model.Field, 0, len(m))
	for f := range m {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	return fs
}

// apply locates and verifies one edit and queues its writes. Exactly one of applied,
// conflict and missing is set; write says the edit queued cells to write (an applied edit
// that doesn't was found already written).
//
// landed, when set, is what an earlier write that failed put in the edit's row. If the row
// as read holds its Set values, the write landed (only its answer was lost) and the edit is
// applied without writing anything. If not, and that write stamped triaged_at (now, unique
// to this Apply) and the tab still has the column: a row that holds the stamp was written by
// it and changed since, and a row whose triaged_at is neither the stamp nor what it held
// before the write was written by someone else meanwhile; both are conflicts, so that a
// change made after the lost answer is not overwritten. Otherwise (triaged_at as before the
// write, or no stamp to look at) the edit is verified as usual.
func (t *tabView) apply(e model.Edit, landed *inDoubt, actor, now string) (applied *model.Applied, conflict *model.Conflict, missing, write bool) {
	if e.ID == "" {
		return nil, nil, true, false
	}
	found := t.ids[e.ID]
	switch len(found) {
	case 0:
		return nil, nil, true, false
	case 1:
	default:
		rows := make([]string, len(found))
		for i, r := range found {
			rows[i] = strconv.Itoa(r + 1)
		}
		return nil, &model.Conflict{Edit: e, Row: found[0] + 1, Field: t.identityField(), Saw: e.ID,
			Reason: fmt.Sprintf("the same ID is on rows %s (make it unique, then retry)", strings.Join(rows, ", "))}, false, false
	}
	row := found[0]
	if landed != nil {
		if t.holds(row, landed.set) {
			return &model.Applied{Edit: e, Row: row + 1}, nil, false, false
		}
		if c := t.hm.Col(model.FTriagedAt); landed.stamped && c >= 0 {
			switch at := t.before(row, c); at {
			case now:
				f := t.differs(row, landed.set)
				return nil, &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: e.Expect[f], Now: t.read(row, t.hm.Col(f)),
					Reason: "changed by someone else after triage's write landed (its answer was lost)"}, false, false
			case landed.before:
			default:
				return nil, &model.Conflict{Edit: e, Row: row + 1, Field: model.FTriagedAt, Saw: landed.before, Now: at,
					Reason: fmt.Sprintf("changed by someone else (triaged_at is now %q) while triage's failed write may have landed", at)}, false, false
			}
		}
	}
	for _, f := range sortedFields(e.Expect) {
		want := e.Expect[f]
		col := t.hm.Col(f)
		if col < 0 {
			if want != "" {
				return nil, &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: want, Reason: fmt.Sprintf("column %s is no longer in the tab", f)}, false, false
			}
			continue
		}
		if now := t.value(row, col); now != want {
			return nil, &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: want, Now: now}, false, false
		}
	}
	changes := false
	for _, f := range sortedFields(e.Set) {
		col := t.hm.Col(f)
		if col < 0 {
			return nil, &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: e.Expect[f], Reason: fmt.Sprintf("the tab has no %s column (add it or map it in config)", f)}, false, false
		}
		cur := t.value(row, col)
		if f == model.FKey && t.tc.Role == model.RoleDeadLetter && strings.TrimSpace(cur) != "" && cur != e.Set[f] {
			return nil, &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: e.Expect[f], Now: cur,
				Reason: fmt.Sprintf("the key cell already holds %q, and a call's key never changes (invariant 3)", cur)}, false, false
		}
		if cur != e.Set[f] {
			changes = true
		}
	}
	if !changes {
		// Nothing to write: the row already holds what the edit sets.
		return &model.Applied{Edit: e, Row: row + 1}, nil, false, false
	}
	if _, setsKey := e.Set[model.FKey]; setsKey && t.tc.Role == model.RoleDeadLetter {
		// The write's answer tells rows apart by content. Another row that reads the same but
		// for the cells this edit writes (a dead letter copied without its key) could take
		// this row's place unseen: the key would land on it, over its own, and read as done.
		if twin := t.twinOf(row, e.Set); twin >= 0 {
			return nil, &model.Conflict{Edit: e, Row: row + 1, Field: model.FKey, Saw: e.Expect[model.FKey], Now: t.value(row, t.hm.Col(model.FKey)),
				Reason: fmt.Sprintf("row %d reads the same but for the cells this edit writes, so triage can't check which of the two its write hit (make them differ, then retry)", twin+1)}, false, false
		}
	}
	for _, f := range sortedFields(e.Set) {
		t.put(row, t.hm.Col(f), e.Set[f])
	}
	if c := t.hm.Col(model.FTriagedBy); c >= 0 && actor != "" {
		if _, explicit := e.Set[model.FTriagedBy]; !explicit {
			t.put(row, c, actor)
		}
	}
	if c := t.hm.Col(model.FTriagedAt); c >= 0 {
		if _, explicit := e.Set[model.FTriagedAt]; !explicit {
			t.put(row, c, now)
		}
	}
	return &model.Applied{Edit: e, Row: row + 1}, nil, false, true
}

// twinOf returns another row (0-based) that reads as row does, as read, in every column but
// those of set and the audit columns, or -1.
func (t *tabView) twinOf(row int, set map[model.Field]string) int {
	var skip []int
	for _, f := range append(sortedFields(set), model.FTriagedBy, model.FTriagedAt) {
		if c := t.hm.Col(f); c >= 0 {
			skip = append(skip, c)
		}
	}
	sort.Ints(skip)
	name := fmt.Sprint(skip)
	if t.twins == nil {
		t.twins = map[string]map[string][]int{}
	}
	rowsBy := t.twins[name]
	if rowsBy == nil {
		// Rows by what they read outside those columns, once per set of columns.
		rowsBy = map[string][]int{}
		for r := 1; r < len(t.rows); r++ {
			var b strings.Builder
			for c := range t.rows[r] {
				if v := t.read(r, c); v != "" && !slices.Contains(skip, c) {
					fmt.Fprintf(&b, "%d=%q;", c, v)
				}
			}
			rowsBy[b.String()] = append(rowsBy[b.String()], r)
		}
		t.twins[name] = rowsBy
	}
	var b strings.Builder
	for c := range t.rows[row] {
		if v := t.read(row, c); v != "" && !slices.Contains(skip, c) {
			fmt.Fprintf(&b, "%d=%q;", c, v)
		}
	}
	for _, r := range rowsBy[b.String()] {
		if r != row {
			return r
		}
	}
	return -1
}

// holds reports whether every field of want has a column whose cell, as read (not counting
// this round's pending writes), holds the wanted value.
func (t *tabView) holds(row int, want map[model.Field]string) bool {
	return t.differs(row, want) == ""
}

// differs returns the first field of want (in field order) whose cell, as read, does not
// hold the wanted value, or "" if all do.
func (t *tabView) differs(row int, want map[model.Field]string) model.Field {
	for _, f := range sortedFields(want) {
		if col := t.hm.Col(f); col < 0 || t.read(row, col) != want[f] {
			return f
		}
	}
	return ""
}

// cellData is the CellData written for a field: a restore with its value's own type (raw:
// a date serial stays a number), attempts as a number when it is an integer (so the sheet
// can sum it), everything else as text. A stringValue is stored as-is, never
// parsed: "=IMPORTXML(...)" stays text (invariant 2). An empty value clears the cell.
func cellData(f model.Field, v string, raw any) *sheetsapi.CellData {
	if v == "" {
		return &sheetsapi.CellData{}
	}
	switch x := raw.(type) {
	case float64:
		if model.CellString(x) == v {
			return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{NumberValue: &x}}
		}
	case bool:
		if model.CellString(x) == v {
			return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{BoolValue: &x}}
		}
	}
	if f == model.FAttempts {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && strings.TrimSpace(v) == v {
			x := float64(n)
			return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{NumberValue: &x}}
		}
	}
	return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &v}}
}
