package sheets

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/triage-dev/triage/internal/a1"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// This file settles other writers' unfinished writes (journal.go): an entry whose writer is
// gone (its lease ran out, or its process is provably dead, see lease.go) is read by the
// next Apply of any triage that writes one of its tabs, in that Apply's first read, and
// settled as its writer would have: every target its journal shows was hit as read is left
// as it is (what was meant landed), every value it left on a row it was not meant for is put
// back, and the values of earlier rounds it still owed are put back too. The entry is
// deleted only by a write that carries what is still owed in its own entry, so a second
// crash loses nothing either. An entry deleted or edited by hand can't be settled: what it
// may have changed is reported as damage (a damage sheet, exit 1), naming the rows.

// foreignEntry is another writer's journal entry, as its metadata names it.
type foreignEntry struct {
	id   int64
	meta journalMeta
}

func (s *Store) journalMetaOf(id int64) (journalMeta, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.journals[id]
	return m, ok
}

func (s *Store) journalSheetOf(id int64) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.journalSheets[id]
	return t, ok
}

// unfinished returns the entries of other writers, as the last metadata seen shows them,
// that this store may settle now: their writer is gone, and every tab they touch is one of
// this store's. Fences of gone writers are only queued for deletion (nothing landed under
// them); entries this store settled already, and live writers' entries, are left.
func (s *Store) unfinished() []*foreignEntry {
	if s.readOnly {
		return nil
	}
	now := s.gclock.now()
	s.mu.Lock()
	ids := slices.Sorted(maps.Keys(s.journals))
	journals := maps.Clone(s.journals)
	prunable := maps.Clone(s.prunable)
	unsettled := maps.Clone(s.unsettled)
	s.mu.Unlock()
	var out []*foreignEntry
	for _, id := range ids {
		m := journals[id]
		if m.V != journalVersion {
			continue // not one this version reads: left for the triage that wrote it
		}
		if _, queued := prunable[id]; queued {
			continue
		}
		mine := m.Writer.Run == s.writer.Run && unsettled[id]
		if !mine && !m.Writer.gone() && !now.After(m.Lease.Add(leaseSkew)) {
			continue // its writer may still be settling it (this store's own Applies included)
		}
		if m.Fence {
			s.pruneID(id, pruneWhat{meta: true})
			continue
		}
		ours := true
		for _, t := range m.Tabs {
			if _, ok := s.tabConfig(t); !ok {
				ours = false
			}
		}
		if ours {
			out = append(out, &foreignEntry{id: id, meta: m})
		}
	}
	return out
}

// keepUnsettled keeps one of this store's own entries for its next Apply to settle (see
// Store.unsettled): it is not deleted before.
func (s *Store) keepUnsettled(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.prunable, id)
	if s.unsettled == nil {
		s.unsettled = map[int64]bool{}
	}
	s.unsettled[id] = true
}

// Settle settles the unfinished writes of other triage processes (and this store's own,
// left by an Apply that ended on an error) that the last answer showed, with no edit of its
// own: a command about to write calls it right after its load, and reads again when it ran,
// so that it plans from the rows as they should be (a dead letter a killed write-back left
// reading "delivered" is dead again before the replay selects its rows). ran is false, and
// nothing is sent, when there is nothing to settle or the store is read-only.
func (s *Store) Settle(ctx context.Context) (res model.ApplyResult, ran bool, err error) {
	if s.readOnly || len(s.unfinished()) == 0 {
		return model.ApplyResult{}, false, nil
	}
	res, err = s.Apply(ctx, nil)
	return res, true, err
}

// workIndex returns the index of a tab in this call's work, adding it (with no edits of its
// own) when the call doesn't write it; -1 if it is not a configured tab.
func (w *writer) workIndex(name string) int {
	tc, ok := w.s.tabConfig(name)
	if !ok {
		return -1
	}
	for i, tw := range w.work {
		if tw.tc.Name == tc.Name {
			return i
		}
	}
	w.work = append(w.work, &tabWork{tc: tc})
	return len(w.work) - 1
}

// adoptEntry settles another writer's entry read as rows (see the file comment).
func (w *writer) adoptEntry(f *foreignEntry, title string, rows [][]any) {
	s := w.s
	jp, text := planIn(f.meta.Title, rows)
	if jp == nil || digest(text) != f.meta.Plan || jp.Rows < 1 {
		w.damageFrom(f, nil, "its journal's plan was changed by someone, or cut short")
		return
	}
	c := copiedFromValues(f.meta.Title, rows, jp.Rows)
	if c.problem != "" {
		w.damageFrom(f, jp, "its journal was changed by someone before it was settled ("+c.problem+")")
		return
	}
	// Every tab of the plan is in this call's work already (Apply added the entry's tabs,
	// which its metadata lists, before the read): one that isn't was not in the metadata.
	wiOf := make([]int, len(jp.Tabs))
	for i, pt := range jp.Tabs {
		wiOf[i] = -1
		for wi, tw := range w.work {
			if tc, ok := s.tabConfig(pt.Name); ok && tw.tc.Name == tc.Name {
				wiOf[i] = wi
			}
		}
		if wiOf[i] < 0 {
			w.damageFrom(f, jp, "its journal's plan names a tab its metadata doesn't")
			return
		}
	}
	who := jp.Writer.String()
	before := map[*restore]bool{}
	for _, rs := range w.owed {
		before[rs] = true
	}
	owed := make([]*restore, len(jp.Owed))
	for i, pr := range jp.Owed {
		if pr.Tab < 0 || pr.Tab >= len(wiOf) {
			w.damageFrom(f, jp, "its journal's plan names a tab it doesn't list")
			return
		}
		owed[i] = pr.restore(wiOf[pr.Tab])
		w.owed = append(w.owed, owed[i])
	}
	p := &writePlan{adopted: true, entry: &entry{id: f.id, title: f.meta.Title, rows: jp.Rows, headerRow: map[int]int{}, plan: jp}}
	for i, pt := range jp.Tabs {
		if pt.HeaderRow >= 0 {
			p.entry.headerRow[wiOf[i]] = pt.HeaderRow
		}
	}
	for _, pt := range jp.Targets {
		if pt.Tab < 0 || pt.Tab >= len(wiOf) {
			w.damageFrom(f, jp, "its journal's plan names a tab it doesn't list")
			return
		}
		t := &target{wi: wiOf[pt.Tab], row: pt.Row, id: pt.ID, read: pt.Read, header: jp.Tabs[pt.Tab].Header, entryRow: pt.EntryRow}
		for _, pc := range pt.Cells {
			t.cells = append(t.cells, cellWrite{col: pc.Col, field: pc.Field, value: pc.Value, raw: pc.Raw})
		}
		for _, i := range pt.Restores {
			if i >= 0 && i < len(owed) {
				t.restores = append(t.restores, owed[i])
			}
		}
		p.targets = append(p.targets, t)
	}
	w.check(p, c)
	for _, rs := range w.owed {
		if !before[rs] {
			rs.from = who
		}
	}
	w.landed = true
	s.prune(p.entry)
}

// adoptGone reports another writer's entry whose sheet is gone as damage.
func (w *writer) adoptGone(f *foreignEntry) {
	w.damageFrom(f, nil, "its journal sheet was deleted by someone before it was settled")
}

// damageFrom reports an entry that can't be settled: each cell its plan says it wrote (or,
// without a readable plan, each tab it names), and queues the entry for deletion: the report
// (the damage sheet) replaces it.
func (w *writer) damageFrom(f *foreignEntry, jp *journalPlan, why string) {
	note := fmt.Sprintf("an unfinished write of %s (%s) can't be checked: %s", f.meta.Writer, words.Count(f.meta.Rows, "row", "rows"), why)
	if jp != nil {
		for _, pt := range jp.Targets {
			if pt.Tab < 0 || pt.Tab >= len(jp.Tabs) {
				continue
			}
			for _, pc := range pt.Cells {
				w.damaged = append(w.damaged, model.Damage{Tab: jp.Tabs[pt.Tab].Name, Row: pt.Row + 1, ID: pt.ID, Column: columnName(pc), Ours: pc.Value, Note: note})
			}
		}
	} else {
		for _, tab := range f.meta.Tabs {
			w.damaged = append(w.damaged, model.Damage{Tab: tab, Note: note})
		}
	}
	w.s.pruneID(f.id, pruneWhat{sheet: true, meta: true})
}

// unprovable settles a write of this call that landed but whose journal someone deleted or
// edited before it could be read: nothing it did can be proven, so each of its edits is a
// conflict and each cell it wrote is reported as damage.
func (w *writer) unprovable(p *writePlan, why string) {
	for _, t := range p.targets {
		tc := w.work[t.wi].tc
		for _, i := range t.edits {
			w.final[i] = &outcome{conflict: &model.Conflict{Edit: w.edits[i], Row: t.row + 1,
				Reason: "the write landed, but " + why + ", so whether it landed on this row is not known: check it"}}
		}
		for _, cw := range t.cells {
			w.damaged = append(w.damaged, model.Damage{Tab: tc.Name, Row: t.row + 1, ID: t.id, Column: columnName(planCell{Col: cw.col, Field: cw.field}), Ours: cw.value,
				Note: "a write of this triage landed, but " + why})
		}
	}
}

func columnName(pc planCell) string {
	if pc.Field != "" {
		return string(pc.Field)
	}
	return a1.ColumnLetter(pc.Col)
}

// putBack records, of a target of this call's own write that landed as read, every value it
// put back for another writer (restores taken over from an unfinished write).
func (w *writer) putBack(p *writePlan, t *target) {
	if p.adopted {
		return
	}
	for _, rs := range t.restores {
		if rs.from == "" {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(rs.cells)) {
			oc := rs.cells[k]
			w.recovered = append(w.recovered, model.Recovery{Tab: w.work[rs.wi].tc.Name, Row: t.row + 1, ID: t.id,
				Column: oc.header, Left: oc.ours, Restored: oc.before, Writer: rs.from})
		}
	}
}

// planIn finds an entry's plan in its rows: the marker row, wherever a sort put it, and the
// plan's text beside it. nil if there is none, or it doesn't read.
func planIn(title string, rows [][]any) (*journalPlan, string) {
	for _, row := range rows {
		if len(row) == 0 || model.CellString(row[0]) != markerFor(title) {
			continue
		}
		text := ""
		for _, v := range row[1:] {
			text += model.CellString(v)
		}
		jp := &journalPlan{}
		if err := jsonUnmarshal(text, jp); err != nil || jp.V != journalVersion {
			return nil, text
		}
		return jp, text
	}
	return nil, ""
}

// plan is a restore as an entry carries it, its tab as the entry's index tab.
func (rs *restore) plan(tab int) planRestore {
	pr := planRestore{Tab: tab, At: rs.at, Cols: slices.Sorted(maps.Keys(rs.cols)), Cells: map[string]planOwed{}, Ident: rs.ident, Row: rs.row, From: rs.from}
	for k, oc := range rs.cells {
		pr.Cells[k] = planOwed{Header: oc.header, Ours: oc.ours, Before: oc.before, OursKind: oc.oursKind, Raw: oc.raw}
	}
	return pr
}

// restore is the restore an entry carries, in this call's tab wi.
func (pr planRestore) restore(wi int) *restore {
	rs := &restore{wi: wi, at: maps.Clone(pr.At), cols: map[string]bool{}, cells: map[string]*owedCell{}, ident: pr.Ident, row: pr.Row, from: pr.From}
	if rs.at == nil {
		rs.at = map[string]string{}
	}
	for _, k := range pr.Cols {
		rs.cols[k] = true
	}
	for k, po := range pr.Cells {
		rs.cells[k] = &owedCell{header: po.Header, ours: po.Ours, before: po.Before, oursKind: po.OursKind, raw: po.Raw}
	}
	return rs
}
