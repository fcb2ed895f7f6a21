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
	"github.com/triage-dev/triage/store"
	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// Apply writes edits by row identity (invariant 1), in write rounds (doc.go explains the
// round). When nothing moves it sends two requests for any number of edits and tabs: one
// values:batchGet of every tab involved, then one spreadsheets.batchUpdate that copies the
// rows it writes into a journal sheet and writes them, atomically.
//
// For each edit, row 1 is mapped afresh (columns may have moved since the load), the row
// whose identity (model.RowIdentity: the ID cell, or a dead letter's effective key) equals
// Edit.ID is found, and every Expect field is compared with the cell's current value
// (model.CellString). An edit whose ID is gone is reported in Missing; one whose cell changed,
// whose ID is on two rows, or which sets a column the tab no longer has is reported in
// Conflicts, and nothing of it is written. Every edit lands in exactly one of Applied,
// Conflicts and Missing, and an edit is in Applied only once the journal proves its row was,
// at the instant of the write, exactly the row read (header included). Only cells whose value
// changes are written: an edit whose Set cells already hold their values is applied with
// nothing written (and no audit stamp). A key cell that holds a value is never written
// (invariant 3): setting it to another value is a conflict. Where the tab has triaged_by /
// triaged_at columns, every edit that writes also sets them (the actor given to ctx by
// model.WithActor, else Options.Actor, and this call's stamp; see Store.stamp). Text is written as
// userEnteredValue.stringValue, which Sheets stores as text and never parses (the RAW of
// invariant 2); only attempts (and a restored number) is written as a number.
//
// Several edits of one row are applied in order against the sheet as read plus the earlier
// edits of the same call: a later edit's Expect sees an earlier edit's Set, and each cell is
// written once, with its last value. Rows are located against the sheet as read, so an edit
// that changes an ID cell does not move the identity for later edits of the same call.
//
// A value of ours that the journal shows on a row it was not meant for is put back, exactly,
// by the next round; a cell that can't be (rows kept moving through every round, or its row
// can't be told from another) is reported in ApplyResult.Damaged with what it held, and
// listed in a damage sheet that blocks key writes on the tab until someone deletes it
// (damage.go). A request that fails for good returns an error; if a write of the call may
// have landed, the error says so and names what is still owed.
//
// A read-only store returns ErrReadOnly and sends nothing; an edit that sets a key cell on a
// tab with a damage sheet is refused whole, with nothing sent.
func (s *Store) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	op := store.ApplyOp(len(edits))
	if len(edits) == 0 {
		op = "settle another triage's unfinished write"
	}
	if s.readOnly {
		return model.ApplyResult{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	foreign := s.unfinished()
	if len(edits) == 0 && len(foreign) == 0 {
		return model.ApplyResult{}, nil
	}

	// Group edits by configured tab, in order of first appearance.
	tcs, err := store.EditTabs(op, s.tabs, edits)
	if err != nil {
		return model.ApplyResult{}, err
	}
	var work []*tabWork
	byName := map[string]*tabWork{}
	for i, tc := range tcs {
		w := byName[tc.Name]
		if w == nil {
			w = &tabWork{tc: tc}
			byName[tc.Name] = w
			work = append(work, w)
		}
		w.edits = append(w.edits, i)
	}

	// The person is this call's (model.WithActor) where one is given: one Store serves every
	// session of `triage serve`, each write recording its own person.
	actor := store.Actor(ctx, s.actor)
	planned := s.takePlanned(work)
	b := &budget{}
	if err := s.knowDamage(ctx, op, b, edits); err != nil {
		return model.ApplyResult{}, err
	}
	if err := s.keyBlocked(op, edits); err != nil {
		return model.ApplyResult{}, err
	}
	w := &writer{s: s, op: op, work: work, edits: edits, actor: actor, now: s.stamp(), b: b,
		final: make([]*outcome, len(edits)), lastRow: map[int]int{}, planned: planned, adopt: foreign}
	for _, f := range foreign {
		for _, t := range f.meta.Tabs {
			w.workIndex(t)
		}
	}
	res, err := w.run(ctx)
	if len(res.Damaged) > 0 {
		// Best effort: the damage is in the result whether or not its sheet is made.
		_ = s.recordDamage(ctx, op, res.Damaged)
	}
	return res, err
}

// Bounds of one call's rounds (see doc.go).
const (
	// maxWriteRounds bounds the rounds that write edits: the first write, then the edits
	// located again while someone keeps moving rows between our read and our write. Past
	// it an undecided edit is a conflict ("the sheet kept changing").
	maxWriteRounds = 6
	// maxRestoreRounds bounds the rounds after maxWriteRounds that only put back values of
	// ours; they wait (full jitter) between them. Generous: under an insert before every
	// write, each round both puts values back and hits new rows, and only rounds end that
	// (measured: 8 left damage in 7 of 40 storm cases of replay's adversary test, 40 none).
	maxRestoreRounds = 40
	// maxStuckRounds ends the restore rounds early: after this many in a row that put none
	// of our values back (someone inserts above the rows every time, so every write lands
	// one row off), more rounds only move the same values around; what is still owed is
	// damage, reported now rather than after every round has waited.
	maxStuckRounds = 16
	// maxRestorePause caps the wait before a restore round: the point is to let a burst of
	// moves pass, not to back off a server.
	maxRestorePause = time.Second
)

// stamp is one Apply's triaged_at (model.Stamper: each Apply's its own).
func (s *Store) stamp() string { return s.stamps.Stamp(s.now()) }

// tabWork is one configured tab of an Apply and the indexes of its edits, in order.
type tabWork struct {
	tc    model.TabConfig
	edits []int
}

// outcome is what became of one edit.
type outcome struct {
	applied  *model.Applied
	conflict *model.Conflict
	missing  bool
}

// writer is one Apply across its rounds.
type writer struct {
	s          *Store
	op         string
	work       []*tabWork
	edits      []model.Edit
	actor, now string
	b          *budget

	// final[i] is edit i's outcome once decided; lastRow[i] the row (1-based) it was last
	// found on, for the message if it never lands.
	final   []*outcome
	lastRow map[int]int
	// owed are values of ours on rows they were not meant for, to put back.
	owed []*restore
	// lost are writes whose answer never came: each is settled (fenced, then read) before
	// the next read plans anything.
	lost []*writePlan
	// landed says a write of this call may have landed (the abort message says so).
	landed bool
	// damaged are cells that could not be put back (see model.Damage).
	damaged []model.Damage
	// planned are the rows LoadTab read for this write (see Store.LoadTab), used by the
	// first round instead of a read, then dropped; nil: the first round reads.
	planned [][][]any
	// adopt are other writers' unfinished entries, settled by this call's first read
	// (recover.go); recovered what it put back of theirs.
	adopt     []*foreignEntry
	recovered []model.Recovery
	// checked is the newest entry of this call whose write landed and was checked: it holds
	// what is still owed, should the call end on an error (see abort).
	checked *entry
	// noPrunes says a write carrying deletions of old entries was refused: this call's
	// writes leave them out.
	noPrunes bool
}

// writePlan is one round's write.
type writePlan struct {
	entry *entry
	// adopted says the write is another writer's, taken over from its journal (recover.go).
	adopted bool
	// pruned are the entries the write deletes (see Store.prunes): gone if it landed.
	pruned []int64
	// views are the tabs as read this round (nil for a tab not planned), by work index.
	views   []*tabView
	targets []*target
}

// target is one row a round writes: where it was read, the cells to write (only those whose
// value changes), and what the write decides when the journal proves it hit that row as read.
type target struct {
	wi, row int // work index; 0-based row as read
	// id is the row's identity as read (for messages); read and header the digests of the
	// row and of its tab's header row as read (rowDigest), which the check compares the
	// journal's copies with.
	id, read, header string
	cells            []cellWrite
	edits            []int      // applied when it checks
	restores         []*restore // settled when it checks
	entryRow         int        // its copy in the journal entry
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

// run is the round loop (doc.go): settle lost writes, read, plan, write, check.
func (w *writer) run(ctx context.Context) (model.ApplyResult, error) {
	stuck, owedBefore := 0, 0
	for round := 1; ; round++ {
		if round > maxWriteRounds+1 && len(w.owed) > 0 {
			// Past the bound only our values on other rows are still being put back. Someone
			// is sorting or inserting without pause: give them a moment, then look again,
			// unless the last rounds put nothing back at all.
			if n := w.owedCells(); n >= owedBefore {
				stuck++
			} else {
				stuck = 0
			}
			if stuck >= maxStuckRounds {
				return w.finish(), nil
			}
			if err := w.s.retry.Sleep(ctx, jitter(min(w.s.retry.Backoff(round-maxWriteRounds-1), maxRestorePause))); err != nil {
				return w.abort(fmt.Errorf("%s: %w", w.op, err))
			}
		}
		owedBefore = w.owedCells()
		rowsOf, gone, err := w.read(ctx)
		if err != nil {
			return w.abort(err)
		}
		p, err := w.plan(rowsOf, gone, round > maxWriteRounds)
		if err != nil {
			return w.abort(err)
		}
		if len(p.targets) == 0 || round > maxWriteRounds+maxRestoreRounds {
			return w.finish(), nil
		}
		if err := w.write(ctx, p, round); err != nil {
			return w.abort(err)
		}
		if w.done() {
			return w.result(), nil
		}
	}
}

// read settles the writes whose answers were lost, then reads every tab involved: a lost
// write either landed or, once fenced, never will; which one is read together with the tabs
// (its entry, found by its ID in a fresh sheet list, or the fence's metadata), and a landed
// one is checked before anything is planned. Other writers' unfinished entries (adopt) are
// read and settled the same way, once.
func (w *writer) read(ctx context.Context) (rowsOf [][][]any, gone []bool, err error) {
	s := w.s
	if w.planned != nil && len(w.lost) == 0 && len(w.adopt) == 0 {
		// The command's own read, which its edits were built from: one read per command.
		rowsOf, w.planned = w.planned, nil
		return rowsOf, make([]bool, len(w.work)), nil
	}
	w.planned = nil
	var landed, fenced []*writePlan
	for len(w.lost) > 0 {
		p := w.lost[0]
		if err := w.leaseLeft(p.entry.plan.Lease); err != nil {
			w.lost = append(landed, w.lost...)
			return nil, nil, err
		}
		exists, err := s.fence(ctx, w.op, w.b, p.entry, p.entry.plan.Lease)
		if err != nil {
			w.lost = append(landed, w.lost...)
			return nil, nil, err
		}
		w.lost = w.lost[1:]
		if exists {
			landed = append(landed, p)
		} else {
			fenced = append(fenced, p)
		}
	}
	if len(landed) > 0 || len(w.adopt) > 0 || len(fenced) > 0 {
		// Where the entries are now, by ID: a person may have renamed or deleted one.
		meta, err := s.getMeta(ctx, w.op, w.b)
		if err != nil {
			w.lost = append(landed, w.lost...)
			return nil, nil, err
		}
		s.rememberSheetIDs(meta, true)
		for _, p := range fenced {
			if sheetByID(meta, p.entry.id) != nil {
				// The fence found no metadata, yet the journal sheet the same batch made is
				// there: the write landed, and someone deleted its metadata (a script; the
				// Sheets UI can't). Nothing of it can be proven.
				w.unprovable(p, "its journal's developer metadata was deleted by someone before triage could check it")
				s.pruneID(p.entry.id, pruneWhat{sheet: true, meta: true})
				continue
			}
			// Never landed, never will: the fence is metadata to delete.
			s.pruneID(p.entry.id, pruneWhat{meta: true})
		}
	}
	var titles []sheetRef
	var reads []func(rows [][]any)
	for _, p := range landed {
		m, hasMeta := s.journalMetaOf(p.entry.id)
		title, hasSheet := s.journalSheetOf(p.entry.id)
		switch {
		case hasMeta && m.Fence:
			// An earlier fence of ours, whose own answer was lost: nothing landed.
			s.pruneID(p.entry.id, pruneWhat{meta: true})
		case !hasMeta || !hasSheet:
			w.unprovable(p, "its journal sheet was deleted before triage could read it")
			s.pruneID(p.entry.id, pruneWhat{meta: hasMeta, sheet: hasSheet})
		default:
			titles = append(titles, sheetRef{id: p.entry.id, title: title})
			reads = append(reads, func(rows [][]any) {
				c := copiedFromValues(p.entry.title, rows, p.entry.rows)
				switch {
				case !c.marker || c.problem != "" || (m.Plan != "" && m.Plan != digest(c.plan)):
					why := "its journal was changed by someone before triage could read it"
					if c.problem != "" {
						why += " (" + c.problem + ")"
					}
					w.unprovable(p, why)
				default:
					s.pruned(p.pruned) // it deleted them
					w.check(p, c)
					w.checked = p.entry
				}
				s.prune(p.entry)
			})
		}
	}
	adopt := w.adopt
	w.adopt = nil
	for _, f := range adopt {
		title, hasSheet := s.journalSheetOf(f.id)
		if !hasSheet {
			w.adoptGone(f)
			continue
		}
		titles = append(titles, sheetRef{id: f.id, title: title})
		reads = append(reads, func(rows [][]any) { w.adoptEntry(f, title, rows) })
	}
	rowsOf, gone, entries, err := s.readForWrite(ctx, w.op, w.b, w.work, titles)
	if err != nil {
		w.lost = append(landed, w.lost...)
		w.adopt = adopt
		return nil, nil, err
	}
	for i, read := range reads {
		read(entries[i])
	}
	return rowsOf, gone, nil
}

// leaseLeft returns an error when the lease of an unsettled entry of this call is about to
// run out: past it, another triage may be settling the entry, and a fence of ours could no
// longer prove anything.
func (w *writer) leaseLeft(lease time.Time) error {
	if w.s.gclock.now().Before(lease.Add(-leaseMargin)) {
		return nil
	}
	w.landed = true
	return fmt.Errorf("%s: this write took longer than its %s lease, so another triage may be settling it now; refresh in a minute and check the rows it changed", w.op, leaseFor)
}

// write sends one round's write, journal first, in one atomic request, and checks every
// target against what the write hit. A write whose answer is lost is left for the next
// round's read to settle; one refused whole is planned again. It returns an error only
// when the call must end.
func (w *writer) write(ctx context.Context, p *writePlan, round int) error {
	s := w.s
	infos, err := s.sheetInfos(ctx, w.op, w.b, w.work)
	if err != nil {
		return err
	}
	prunes, pruneIDs := s.prunes()
	if w.noPrunes {
		prunes, pruneIDs = nil, nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", w.op, err)
	}
	p.pruned = pruneIDs
	p.entry.plan.Lease = s.gclock.now().Add(leaseFor)
	resp, err := s.sendWrite(ctx, p.request(w.work, infos, prunes, s.writer))
	if err != nil {
		var gerr *googleapi.Error
		refused := errors.As(err, &gerr) && gerr.Code == 400
		switch {
		case outcomeUnknown(err):
			// Maybe applied, maybe not, maybe later: the next round fences and reads it.
			w.landed = true
			w.lost = append(w.lost, p)
			return s.backoff(ctx, w.op, w.b, err)
		case refused && len(pruneIDs) > 0:
			// Refused whole, nothing applied; a journal sheet someone else deleted makes its
			// deleteSheet fail. Write without the old entries; they stay queued, for Close
			// (which deletes them one by one) or the next call: the refusal may have had
			// another cause, and an entry forgotten here would outlive every triage.
			w.noPrunes = true
			return nil
		case isNoGrid(err) || (refused && round == 1):
			// A tab deleted and made again, or grown past the entry's width, since the cached
			// metadata: ask again, plan again (a round, so it can't loop).
			s.forgetSheetIDs()
			return nil
		}
		// Refused whole (429 and other 4xx): nothing applied.
		return s.backoff(ctx, w.op, w.b, err)
	}
	w.b.answered()
	w.landed = true
	s.pruned(pruneIDs)
	s.rememberAnswer(resp)
	c := copiedFromResponse(resp, p.entry)
	if !c.holdsMarker(p.entry) || c.problem != "" {
		// An answer without the entry (or with one someone changed in that instant) can't
		// prove anything: settle it as a lost one, from a read.
		w.lost = append(w.lost, p)
		return nil
	}
	w.check(p, c)
	s.prune(p.entry)
	w.checked = p.entry
	return nil
}

// sendWrite sends one write round with the request deadline.
func (s *Store) sendWrite(ctx context.Context, req *sheetsapi.BatchUpdateSpreadsheetRequest) (*sheetsapi.BatchUpdateSpreadsheetResponse, error) {
	ctx, cancel := s.requestContext(ctx)
	defer cancel()
	return s.svc.Spreadsheets.BatchUpdate(s.id, req).Fields(writeResponseFields).Context(ctx).Do()
}

// plan locates the owed restores, then every undecided edit, against this round's read, and
// lays the targets out in a new journal entry. Edits decided without a write (conflicts,
// missing, already holding their values) are final at once: a read is a consistent snapshot.
func (w *writer) plan(rowsOf [][][]any, gone []bool, stopEdits bool) (*writePlan, error) {
	p := &writePlan{entry: newEntry(w.s.now()), views: make([]*tabView, len(w.work))}
	for wi := range w.work {
		if err := w.planTab(p, wi, rowsOf[wi], gone[wi], stopEdits); err != nil {
			return nil, err
		}
	}
	// The entry: row 0 the marker, then per tab its header row and its targets' rows.
	n := 1
	for wi := range w.work {
		first := true
		for _, t := range p.targets {
			if t.wi != wi {
				continue
			}
			if first {
				p.entry.headerRow[wi] = n
				n++
				first = false
			}
			t.entryRow = n
			n++
		}
	}
	p.entry.rows = n
	p.entry.plan = w.journalPlan(p)
	return p, nil
}

// journalPlan is what the round's entry says of it (journal.go): every target, and every value
// of this call still owed back, so that any triage can settle the write as this call would.
func (w *writer) journalPlan(p *writePlan) *journalPlan {
	jp := &journalPlan{V: journalVersion, Writer: w.s.writer, Op: w.op, Rows: p.entry.rows}
	tabOf := map[int]int{}
	for wi := range w.work {
		if r, ok := p.entry.headerRow[wi]; ok {
			tabOf[wi] = len(jp.Tabs)
			jp.Tabs = append(jp.Tabs, planTab{Name: w.work[wi].tc.Name, HeaderRow: r, Header: p.views[wi].headerDigest})
		}
	}
	owedAt := map[*restore]int{}
	for _, rs := range w.owed {
		if _, ok := tabOf[rs.wi]; !ok {
			// A tab this round doesn't write: its owed values ride in the entry too.
			tabOf[rs.wi] = len(jp.Tabs)
			jp.Tabs = append(jp.Tabs, planTab{Name: w.work[rs.wi].tc.Name, HeaderRow: -1})
		}
		owedAt[rs] = len(jp.Owed)
		jp.Owed = append(jp.Owed, rs.plan(tabOf[rs.wi]))
	}
	for _, t := range p.targets {
		pt := planTarget{Tab: tabOf[t.wi], Row: t.row, ID: t.id, EntryRow: t.entryRow, Read: t.read}
		for _, c := range t.cells {
			pt.Cells = append(pt.Cells, planCell{Col: c.col, Field: c.field, Value: c.value, Raw: c.raw})
		}
		for _, rs := range t.restores {
			if i, ok := owedAt[rs]; ok {
				pt.Restores = append(pt.Restores, i)
			}
		}
		jp.Targets = append(jp.Targets, pt)
	}
	return jp
}

// planTab plans one tab of a round (see plan).
func (w *writer) planTab(p *writePlan, wi int, rows [][]any, gone, stopEdits bool) error {
	tw := w.work[wi]
	var pending []int
	for _, i := range tw.edits {
		if w.final[i] == nil {
			pending = append(pending, i)
		}
	}
	owed := w.owedIn(wi)
	if gone {
		// The tab is gone, and with it any value of ours left in it.
		for _, i := range pending {
			w.final[i] = &outcome{missing: true}
		}
		w.settle(owed...)
		return nil
	}
	if len(pending) == 0 && len(owed) == 0 {
		return nil
	}
	v, err := newTabView(tw.tc, rows)
	if err != nil {
		if !w.landed {
			return fmt.Errorf("%s: can't locate rows in tab %q: %w; nothing was written", w.op, tw.tc.Name, err)
		}
		// A write of this call landed, and the header changed since (a row inserted above
		// it, say): the edits can't be located, but what is owed can still be put back.
		for _, i := range pending {
			w.final[i] = &outcome{conflict: &model.Conflict{Edit: w.edits[i], Reason: fmt.Sprintf("can't locate rows in tab %q any more: %v", tw.tc.Name, err)}}
		}
		pending = nil
	}
	p.views[wi] = v

	// Restores first: an edit's Expect must see a cell as it was before our stray value.
	placed, settled, unplaced := v.placeRestores(owed)
	w.settle(settled...)
	// Several rows read alike and it can't be told which is ours: a person must look.
	w.giveUp(tw.tc.Name, unplaced...)
	byRow := map[int]*target{}
	targetAt := func(r int) *target {
		if byRow[r] == nil {
			byRow[r] = &target{wi: wi, row: r}
		}
		return byRow[r]
	}
	for r, rs := range placed {
		targetAt(r).restores = rs
	}
	wanted := make(map[string]bool, len(pending))
	for _, i := range pending {
		wanted[w.edits[i].ID] = true
	}
	v.index(wanted)
	if stopEdits {
		pending = nil // past the bound: only restores are still written
	}
	for _, i := range pending {
		applied, conflict, missing, write := v.apply(w.edits[i], w.actor, w.now)
		if !write {
			w.final[i] = &outcome{applied: applied, conflict: conflict, missing: missing}
			continue
		}
		t := targetAt(applied.Row - 1)
		t.edits = append(t.edits, i)
		w.lastRow[i] = applied.Row
	}
	// Only now is every pending cell final: keep those whose value changes.
	for _, c := range v.order {
		raw, restoring := v.pendingRaw[c]
		if val := v.pending[c]; val != v.read(c.row, c.col) || (restoring && kindOf(raw) != kindOf(v.rawAt(c.row, c.col))) {
			t := targetAt(c.row)
			t.cells = append(t.cells, cellWrite{col: c.col, field: v.fieldOf(c.col), value: val, raw: v.pendingRaw[c]})
		}
	}
	for _, r := range slices.Sorted(maps.Keys(byRow)) {
		t := byRow[r]
		if len(t.cells) == 0 {
			// Nothing to write: the row as read already holds everything (an edit set a
			// cell back to what a restore would have put there, or to what it holds).
			for _, i := range t.edits {
				w.final[i] = &outcome{applied: &model.Applied{Edit: w.edits[i], Row: r + 1}}
			}
			w.settle(t.restores...)
			continue
		}
		sort.Slice(t.cells, func(a, b int) bool { return t.cells[a].col < t.cells[b].col })
		t.read, t.header = rowDigest(v.text[r]), v.headerDigest
		t.id = model.RowIdentity(tw.tc, v.hm, v.text[r])
		p.targets = append(p.targets, t)
	}
	return nil
}

// request is the round's write: delete checked entries, add this one (its sheet, plan, tags
// and metadata), copy the header row and every target row into it (twice), then write the
// cells, all in one atomic batchUpdate whose answer carries the entry.
func (p *writePlan) request(work []*tabWork, infos []sheetInfo, prunes []*sheetsapi.Request, who writerID) *sheetsapi.BatchUpdateSpreadsheetRequest {
	e := p.entry
	cols := 1
	var tabs []string
	for wi := range e.headerRow {
		cols = max(cols, infos[wi].cols+journalSlack)
	}
	for i := range e.plan.Tabs {
		tabs = append(tabs, e.plan.Tabs[i].Name)
		for wi := range work {
			if work[wi].tc.Name == e.plan.Tabs[i].Name {
				e.plan.Tabs[i].Sheet = infos[wi].id
			}
		}
	}
	var copies []*sheetsapi.Request
	for wi := range work {
		if r, ok := e.headerRow[wi]; ok {
			copies = append(copies, e.copyRows(infos[wi].id, 0, 1, r))
		}
	}
	// Runs of adjacent rows are copied in one request.
	for j := 0; j < len(p.targets); {
		k := j + 1
		for k < len(p.targets) && p.targets[k].wi == p.targets[j].wi && p.targets[k].row == p.targets[k-1].row+1 && p.targets[k].entryRow == p.targets[k-1].entryRow+1 {
			k++
		}
		t := p.targets[j]
		copies = append(copies, e.copyRows(infos[t.wi].id, t.row, k-j, t.entryRow))
		j = k
	}
	reqs := slices.Clone(prunes)
	reqs = append(reqs, e.requests(cols, copies, journalMeta{Writer: who, Lease: e.plan.Lease, Tabs: tabs, Rows: len(p.targets)})...)
	// Then the cells: one updateCells per run of adjacent changed cells of a row.
	for _, t := range p.targets {
		for j := 0; j < len(t.cells); {
			k := j + 1
			for k < len(t.cells) && t.cells[k].col == t.cells[k-1].col+1 {
				k++
			}
			vals := make([]*sheetsapi.CellData, 0, k-j)
			for _, c := range t.cells[j:k] {
				vals = append(vals, cellData(c.field, c.value, c.raw))
			}
			reqs = append(reqs, &sheetsapi.Request{UpdateCells: &sheetsapi.UpdateCellsRequest{
				Start:  &sheetsapi.GridCoordinate{SheetId: infos[t.wi].id, RowIndex: int64(t.row), ColumnIndex: int64(t.cells[j].col)},
				Rows:   []*sheetsapi.RowData{{Values: vals}},
				Fields: "userEnteredValue",
			}})
			j = k
		}
	}
	return &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: reqs, IncludeSpreadsheetInResponse: true,
		ResponseRanges: []string{e.responseRange()}, ResponseIncludeGridData: true}
}

// check decides every target of a write that landed, from its entry: a target whose row, and
// whose tab's header row, held at the instant of the write exactly what the round read is
// done (its edits applied, its restores settled). Any other target hit a row it was not
// meant for, or one someone changed since the read: every cell the write changed there is
// owed back (see miss), and its edits are located again by the next round.
func (w *writer) check(p *writePlan, c *copied) {
	// What was owed before this write: a restore made from this write describes a row after
	// it, and must not be folded into another row this write hit.
	prior := slices.Clone(w.owed)
	headers := map[int]string{} // each tab's header copy's digest, by work index
	for wi, r := range p.entry.headerRow {
		h, _ := c.row(r)
		headers[wi] = rowDigest(h)
	}
	for _, t := range p.targets {
		header, _ := c.row(p.entry.headerRow[t.wi])
		before, raw := c.row(t.entryRow)
		if headers[t.wi] == t.header && rowDigest(before) == t.read {
			for _, i := range t.edits {
				w.final[i] = &outcome{applied: &model.Applied{Edit: w.edits[i], Row: t.row + 1}}
			}
			w.putBack(p, t)
			w.settle(t.restores...)
			continue
		}
		w.miss(t, w.work[t.wi].tc, header, before, raw, prior)
	}
}

// miss records what a write did to a row it was not meant for: each cell it changed, with
// what the cell held (from the journal, so exact even for a row inserted a moment before),
// found again by the row as the write left it. A value of ours already owed on that same
// row is folded in, so that what is owed is what the row held before any write of ours.
func (w *writer) miss(t *target, tc model.TabConfig, header, before []string, raw []any, prior []*restore) {
	trimmed := make([]string, len(header))
	for i, h := range header {
		trimmed[i] = strings.TrimSpace(h)
	}
	keys := columnKeys(trimmed)
	hm, err := model.MapHeaders(tc, trimmed)
	if err != nil {
		hm = model.HeaderMap{Index: map[model.Field]int{}}
	}
	after := slices.Clone(before)
	for _, cw := range t.cells {
		for len(after) <= cw.col {
			after = append(after, "")
		}
		after[cw.col] = cw.value
	}
	rs := newRestore(t.wi, keys, after)
	rs.row = t.row + 1
	for _, cw := range t.cells {
		// Changed: another text, or the same text with another type (the number 2 over the
		// text "2").
		if b, braw := cellAt(before, cw.col), rawAt(raw, cw.col); b != cw.value || kindOf(braw) != cw.kind() {
			rs.cells[keyAt(keys, cw.col)] = &owedCell{header: headerAt(trimmed, cw.col), ours: cw.value, oursKind: cw.kind(), before: b, raw: braw}
		}
	}
	if old := w.owedOn(t.wi, tc, hm, keys, before, prior); old != nil {
		now := contentOf(keys, before)
		for k, oc := range old.cells {
			if mine, ok := rs.cells[k]; ok {
				mine.before, mine.raw = oc.before, oc.raw
			} else if now[k] == oc.ours {
				cp := *oc
				rs.cells[k] = &cp
			}
		}
		w.settle(old)
	}
	back := slices.Clone(after)
	for k, oc := range rs.cells {
		if oc.ours == oc.before && oc.oursKind == kindOf(oc.raw) {
			delete(rs.cells, k)
			continue
		}
		if c := colOfKey(keys, k); c >= 0 && c < len(back) {
			back[c] = oc.before
		}
	}
	if len(rs.cells) == 0 {
		return
	}
	rs.ident = distinctIdentity(tc, hm, back)
	w.owed = append(w.owed, rs)
}

// owedOn returns the restore, owed before this write (prior), of the row a write hit (before,
// under keys), if any. At most one, and one that reads exactly as left before one found by
// identity: two owed restores that both fit are of rows that read alike, and the other is
// still owed to the other row.
func (w *writer) owedOn(wi int, tc model.TabConfig, hm model.HeaderMap, keys, before []string, prior []*restore) *restore {
	for _, byIdentity := range []bool{false, true} {
		for _, old := range prior {
			if old.wi != wi || !slices.Contains(w.owed, old) {
				continue
			}
			if (!byIdentity && old.readsAsLeft(keys, before)) || (byIdentity && old.fits(tc, hm, keys, before)) {
				return old
			}
		}
	}
	return nil
}

// distinctIdentity is a row's identity where something of the row itself decides it (an ID, a
// key, what a key is minted from), else "": rows blank but for our values all mint the same
// key, and that tells no row from another.
func distinctIdentity(tc model.TabConfig, hm model.HeaderMap, cells []string) string {
	for _, f := range []model.Field{model.FID, model.FKey, model.FPayload, model.FSource, model.FURL, model.FTimestamp} {
		if c := hm.Col(f); c >= 0 && strings.TrimSpace(cellAt(cells, c)) != "" {
			return model.RowIdentity(tc, hm, cells)
		}
	}
	return ""
}

// owedIn returns the owed restores of one tab.
func (w *writer) owedIn(wi int) []*restore {
	var out []*restore
	for _, rs := range w.owed {
		if rs.wi == wi {
			out = append(out, rs)
		}
	}
	return out
}

// owedCells counts the cells of ours still owed back.
func (w *writer) owedCells() int {
	n := 0
	for _, rs := range w.owed {
		n += len(rs.cells)
	}
	return n
}

// settle drops restores that are done (or that nothing is owed for any more).
func (w *writer) settle(done ...*restore) {
	w.owed = slices.DeleteFunc(w.owed, func(rs *restore) bool { return slices.Contains(done, rs) })
}

// giveUp reports restores that can't be placed as damage, and drops them.
func (w *writer) giveUp(tab string, lost ...*restore) {
	for _, rs := range lost {
		for _, k := range slices.Sorted(maps.Keys(rs.cells)) {
			oc := rs.cells[k]
			w.damaged = append(w.damaged, model.Damage{Tab: tab, Row: rs.row, ID: rs.ident, Column: oc.header, Ours: oc.ours, Before: oc.before})
		}
	}
	w.settle(lost...)
}

// done reports whether every edit is decided and nothing of ours is owed.
func (w *writer) done() bool {
	for _, o := range w.final {
		if o == nil {
			return false
		}
	}
	return len(w.owed) == 0 && len(w.lost) == 0
}

// finish ends a call whose last read planned no write, or that ran out of rounds: undecided
// edits become conflicts, and values of ours still owed become damage.
func (w *writer) finish() model.ApplyResult {
	for i, e := range w.edits {
		if w.final[i] != nil {
			continue
		}
		// Row is where it was last found (0 if it never was); the reason ends before
		// Conflict.String's own "not written".
		w.final[i] = &outcome{conflict: &model.Conflict{Edit: e, Row: w.lastRow[i], Reason: "the sheet kept changing under triage's writes (rows moved between its read and its write every time, try again)", Undecided: true}}
	}
	for wi, tw := range w.work {
		w.giveUp(tw.tc.Name, w.owedIn(wi)...)
	}
	return w.result()
}

// result lists the outcomes in the order of the edits.
func (w *writer) result() model.ApplyResult {
	res := model.ApplyResult{Damaged: w.damaged, Recovered: w.recovered}
	for i, o := range w.final {
		switch {
		case o == nil || o.missing:
			res.Missing = append(res.Missing, w.edits[i])
		case o.applied != nil:
			res.Applied = append(res.Applied, *o.applied)
		case o.conflict != nil:
			res.Conflicts = append(res.Conflicts, *o.conflict)
		default:
			res.Missing = append(res.Missing, w.edits[i])
		}
	}
	return res
}

// landedMark is model.ErrMayHaveLanded, wrapped without adding text (the message says it).
var landedMark = silent{model.ErrMayHaveLanded}

// silent is an error that wraps err but reads as nothing: %w of it marks an error without
// changing its message.
type silent struct{ err error }

func (s silent) Error() string { return "" }
func (s silent) Unwrap() error { return s.err }

// abort ends a call on an error. After a write that may have landed, the error says so and
// names what is still owed and where the journal shows it: nothing that depends on this
// write may report success, and a person must know what to look at.
func (w *writer) abort(err error) (model.ApplyResult, error) {
	if !w.landed {
		return model.ApplyResult{}, err
	}
	if len(w.owed) > 0 && w.checked != nil {
		// Its newest checked entry says what is still owed: it stays, for this store's next
		// Apply (or, once its lease runs out, any triage's) to settle.
		w.s.keepUnsettled(w.checked.id)
	}
	var left []string
	for _, rs := range w.owed {
		for _, k := range slices.Sorted(maps.Keys(rs.cells)) {
			oc := rs.cells[k]
			left = append(left, fmt.Sprintf("%s row %d, column %s: triage's %q should be %q", w.work[rs.wi].tc.Name, rs.row, oc.header, oc.ours, oc.before))
		}
	}
	for _, p := range w.lost {
		left = append(left, fmt.Sprintf("the hidden sheet %q shows what a write whose answer was lost hit, if it landed", p.entry.title))
	}
	if len(left) == 0 {
		return model.ApplyResult{}, fmt.Errorf("%w (a write of this call landed; refresh and check the rows you changed)%w", err, landedMark)
	}
	return model.ApplyResult{}, fmt.Errorf("%w; a write of this call may have landed on rows it was not meant for; check by hand: %s%w", err, strings.Join(left, "; "), landedMark)
}

func (s *Store) tabNames() string { return store.TabNames(s.tabs) }

// readForWrite reads every tab of a round, and the extra ranges (entries of lost writes), in
// one values:batchGet. rowsOf[i] are the rows of work[i]; gone[i] says that tab no longer
// exists (deleted or renamed since the load), in which case its edits are reported missing
// and the rest is read in one more request.
// sheetRef is a journal entry's sheet as a read names it: by title, and by ID should the
// title have changed since it was learnt (a person renaming a hidden sheet).
type sheetRef struct {
	id    int64
	title string
}

func (s *Store) readForWrite(ctx context.Context, op string, b *budget, work []*tabWork, extra []sheetRef) (rowsOf [][][]any, gone []bool, extraRows [][][]any, err error) {
	ranges := make([]string, 0, len(work)+len(extra))
	for _, w := range work {
		ranges = append(ranges, quoteTab(w.tc.Name))
	}
	for _, t := range extra {
		ranges = append(ranges, quoteTab(t.title))
	}
	rowsOf = make([][][]any, len(work))
	gone = make([]bool, len(work))
	extraRows = make([][][]any, len(extra))
	take := func(vrs []*sheetsapi.ValueRange, idx []int) {
		for j, i := range idx {
			if vrs[j] == nil {
				continue
			}
			if i < len(work) {
				rowsOf[i] = vrs[j].Values
			} else {
				extraRows[i-len(work)] = vrs[j].Values
			}
		}
	}
	all := make([]int, len(ranges))
	for i := range all {
		all[i] = i
	}
	vrs, err := s.batchGet(ctx, op, b, ranges)
	// A tab was deleted or renamed since the load: find which, read the others. A person may
	// rename a sheet again in the instant between that list and the read: a few times over.
	for try := 0; err != nil && isParseRange(err) && try < 3; try++ {
		meta, merr := s.getMeta(ctx, op, b)
		if merr != nil {
			return nil, nil, nil, merr
		}
		s.rememberSheetIDs(meta, true)
		var again []string
		var idx []int
		for i := range ranges {
			var sh *sheetsapi.Sheet
			if i < len(work) {
				sh = findSheet(meta, work[i].tc.Name)
			} else {
				// A journal by its ID: renamed, it is still the same entry.
				sh = sheetByID(meta, extra[i-len(work)].id)
			}
			if i < len(work) {
				gone[i] = sh == nil
			}
			if sh == nil {
				continue
			}
			again = append(again, quoteTab(sh.Properties.Title))
			idx = append(idx, i)
		}
		if len(again) == 0 {
			return rowsOf, gone, extraRows, nil
		}
		var vrs2 []*sheetsapi.ValueRange
		if vrs2, err = s.batchGet(ctx, op, b, again); err == nil {
			take(vrs2, idx)
			return rowsOf, gone, extraRows, nil
		}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	take(vrs, all)
	return rowsOf, gone, extraRows, nil
}

// kind is how a cell write is stored: "number", "bool", "text", or "" for a cleared cell.
func (cw cellWrite) kind() string {
	d := cellData(cw.field, cw.value, cw.raw)
	switch {
	case d.UserEnteredValue == nil:
		return ""
	case d.UserEnteredValue.NumberValue != nil:
		return "number"
	case d.UserEnteredValue.BoolValue != nil:
		return "bool"
	}
	return "text"
}

// kindOf is how a value read (UNFORMATTED_VALUE) is stored, in cellWrite.kind's words.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return "number"
	case bool:
		return "bool"
	case string:
		if x == "" {
			return ""
		}
	}
	return "text"
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
	case string:
		// A restore of text stays text, even where triage itself writes numbers (attempts).
		return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &v}}
	}
	if f == model.FAttempts {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && strings.TrimSpace(v) == v {
			x := float64(n)
			return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{NumberValue: &x}}
		}
	}
	return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &v}}
}
