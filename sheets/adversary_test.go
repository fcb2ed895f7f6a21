package sheets_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// The issue-15 adversary, for every write path of the store: between any two requests of
// triage, another editor sorts the tab, inserts rows (some holding values in the columns
// triage writes), deletes rows or inserts a column, or sorts or renames one of triage's own
// journal sheets; and up to two of triage's writes (the
// edits', a repair's, a fence, an append) are applied by the emulator with their answer lost
// (the connection dropped, or a 503 after the write). After each case the sheet must hold:
//
//  1. every row as the other editor left it (found by a tag column nobody writes), except
//     the applied edits' cells on their own rows: no cell outside the request changed, a row
//     inserted mid-write included, and no junk row;
//  2. every edit in exactly one of applied (and then on its row), missing (its row deleted)
//     or a conflict that says the sheet kept changing; no damage, no error;
//  3. every key cell as it was, or, where the edit minted it, the key of its own row;
//  4. (the sink) each dead letter exactly once, under the right headers, with its key.
//
// In a third of the cases the process is killed after one of its writes, and a fresh store
// settles what it left once its lease has run out; in a quarter of those a person first
// deletes the dead write's journal or edits one of its copies. Then nothing of that write
// can be proven: the next run must report damage for the tab and add the damage sheet (never
// take the journal for proof), and the rows are not checked further.
//
// CI runs 600 cases; TRIAGE_ADVERSARY_CASES=20000 runs more.
func TestWritesProvableUnderMovesAndLostAnswers(t *testing.T) {
	cases := testbed.CaseCount(600, 120, "TRIAGE_ADVERSARY_CASES")
	f := newFixture(t, nil)
	stats := map[string]int{}
	for seed := range testbed.Seeds(t, cases, 0, "TRIAGE_ADVERSARY_SEED") {
		adversaryCase(t, f, seed, stats)
	}
	t.Logf("%d cases: %v", cases, stats)
	if cases >= 600 && os.Getenv("TRIAGE_ADVERSARY_SEED") == "" {
		testbed.Exercised(t, stats, append(slices.Clone(adversaryPaths), "sort", "insert", "delete", "insert-column", "journal:rename", "journal:sort", "journal:delete", "journal:edit", "lost:landed", "lost:503-landed", "repaired", "→applied", "→missing")...)
	}
}

var adversaryPaths = []string{"set-status", "mark-read", "discard", "clear-error", "requeue-stale", "payload-edit", "write-back", "mint", "undo", "sink"}

// adversary is the other editor of one case, and the test's record of what each row must
// hold: rows by tag, by header.
type adversary struct {
	t      *testing.T
	f      *fixture
	id     string
	tab    string
	rng    *rand.Rand
	seed   int
	rows   map[string]map[string]string // tag → header → value, as the other editor left it
	next   int
	stats  map[string]int
	moving bool
	writes int
	lostAt map[int]string // ordinal of a spreadsheets.batchUpdate → how its answer is lost
	// crashAt, when set, is the ordinal of the spreadsheets.batchUpdate after which the
	// writing process dies: that write is applied and its answer lost, and every later
	// request of that store is refused while kill ends its context.
	crashAt int
	crashed bool
	kill    context.CancelFunc
}

func (a *adversary) cells() [][]any { return a.f.emu.Cells(a.id, a.tab) }

// hook runs before every request triage sends: maybe a move, maybe a lost answer for it.
func (a *adversary) hook(r emulator.Request) {
	if !a.moving {
		return
	}
	if a.crashed {
		// The process is gone: nothing it sends arrives.
		a.kill()
		a.f.emu.InjectFault(emulator.Fault{Method: r.Method, Status: 503})
		return
	}
	if r.Method == mBatchUpdate {
		a.writes++
		if a.writes == a.crashAt {
			a.f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
			a.crashed = true
			a.stats["crash"]++
			a.maybeMove()
			return
		}
		switch a.lostAt[a.writes] {
		case "drop":
			a.f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
			a.stats["lost:landed"]++
		case "503":
			a.f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: true})
			a.stats["lost:503-landed"]++
		}
	}
	a.maybeMove()
}

func (a *adversary) maybeMove() {
	if a.rng.IntN(3) != 0 {
		return
	}
	for range 1 + a.rng.IntN(2) {
		a.move()
	}
}

func (a *adversary) move() {
	t := a.t
	cells := a.cells()
	header := headerNames(cells)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	switch n := a.rng.IntN(12); {
	case n >= 10:
		// A person or a script touching triage's own bookkeeping: a "sort every tab" script,
		// someone who showed the hidden sheets and renamed one. Neither may cost the proof.
		var journals []string
		for _, sh := range a.f.emu.Workbook(a.id).Sheets {
			if strings.HasPrefix(sh.Title, "_triage_journal_") || strings.HasPrefix(sh.Title, "renamed journal ") {
				journals = append(journals, sh.Title)
			}
		}
		if len(journals) == 0 {
			return
		}
		j := journals[a.rng.IntN(len(journals))]
		if n == 10 {
			must(a.f.emu.RenameSheet(a.id, j, fmt.Sprintf("renamed journal %d", a.next)))
			a.next++
			a.stats["journal:rename"]++
			return
		}
		jc := a.f.emu.Cells(a.id, j)
		width := 1
		for _, row := range jc {
			width = max(width, len(row))
		}
		must(a.f.emu.SortRows(a.id, j, a.rng.IntN(width), a.rng.IntN(2) == 0))
		a.stats["journal:sort"]++
	case n < 3:
		must(a.f.emu.SortRows(a.id, a.tab, a.rng.IntN(len(header)), a.rng.IntN(2) == 0))
		a.stats["sort"]++
	case n < 6:
		var add [][]any
		for range 1 + a.rng.IntN(2) {
			tag := a.tag()
			row := make([]any, len(header))
			for c, h := range header {
				row[c] = freshCell(h, tag, a.rng)
			}
			add = append(add, row)
			a.rows[tag] = rowContent(header, row)
		}
		must(a.f.emu.InsertRows(a.id, a.tab, 2+a.rng.IntN(len(cells)), add))
		a.stats["insert"]++
	case n < 9:
		if len(cells) <= 2 {
			return
		}
		r := 1 + a.rng.IntN(len(cells)-1)
		tag := a.identify(header, cells[r])
		if tag == "" {
			// A dead letter the sink appended, a cleared row, or a row holding a value of
			// triage's in the very column the test tells rows apart by (a column moved under
			// a write): the test could not say which row went.
			return
		}
		delete(a.rows, tag)
		must(a.f.emu.DeleteRow(a.id, a.tab, r+1))
		a.stats["delete"]++
	default:
		at := a.rng.IntN(len(header) + 1)
		name := fmt.Sprintf("extra%d", a.next)
		a.next++
		must(a.f.emu.InsertColumns(a.id, a.tab, at, 1))
		must(a.f.emu.SetCell(a.id, a.tab, 1, at, name))
		now := a.cells()
		for r := 1; r < len(now); r++ {
			tag := a.identify(headerNames(now), now[r])
			if tag == "" {
				continue // see the delete above
			}
			if a.rng.IntN(2) == 0 {
				v := fmt.Sprintf("note %d", a.rng.IntN(1000))
				must(a.f.emu.SetCell(a.id, a.tab, r+1, at, v))
				a.rows[tag][name] = v
			}
		}
		a.stats["insert-column"]++
	}
}

// identify returns a row's tag when the row agrees with what the test knows of that tag in
// every column triage never writes, else "".
func (a *adversary) identify(header []string, row []any) string {
	got := rowContent(header, row)
	want, ok := a.rows[got["tag"]]
	if !ok {
		return ""
	}
	for _, h := range []string{"Timestamp", "Name", "Email", "Message", "ID", "id", "type", "timestamp", "source", "url"} {
		if got[h] != want[h] {
			return ""
		}
	}
	return got["tag"]
}

func (a *adversary) tag() string {
	a.next++
	return fmt.Sprintf("t%d-%d", a.seed, a.next)
}

// freshCell is a cell of a row the other editor inserts: its own ID, payload and tag, and
// sometimes a value in a column triage writes (so a write that hits it overwrites something).
func freshCell(h, tag string, rng *rand.Rand) any {
	switch h {
	case "tag":
		return tag
	case "ID", "id":
		return "fresh-" + tag
	case "payload":
		return `{"fresh":"` + tag + `"}`
	case "source":
		return "crm"
	case "url":
		return "https://x.example/h"
	case "Message", "Name", "type":
		return "fresh " + tag
	case "Status":
		return []string{"", "spam", "read"}[rng.IntN(3)]
	case "status":
		return []string{"", "rejected", "pending", "claimed"}[rng.IntN(4)]
	case "error", "lastError":
		return []string{"", "boom"}[rng.IntN(2)]
	case "key":
		return []string{"", "kf-" + tag}[rng.IntN(2)]
	}
	return ""
}

func headerNames(cells [][]any) []string {
	if len(cells) == 0 {
		return nil
	}
	h := make([]string, len(cells[0]))
	for i, v := range cells[0] {
		h[i] = model.CellString(v)
	}
	return h
}

func rowContent(header []string, row []any) map[string]string {
	m := map[string]string{}
	for c, h := range header {
		if c < len(row) {
			if v := model.CellString(row[c]); v != "" {
				m[h] = v
			}
		}
	}
	return m
}

// adversaryTab is a tab for a path, with a tag column and rows to act on.
func adversaryTab(path string, seed int, rng *rand.Rand) (model.TabConfig, [][]any) {
	n := 4 + rng.IntN(10)
	tag := func(i int) string { return fmt.Sprintf("t%d-r%d", seed, i) }
	switch path {
	case "set-status", "mark-read", "undo":
		tc := inboxTab("Inbox", "new", "read", "replied", "done", "spam")
		header := []any{"Timestamp", "Name", "Email", "Message", "Status", "ID", "tag"}
		if rng.IntN(2) == 0 {
			header = append(header, "triaged_by", "triaged_at")
		}
		rows := [][]any{header}
		for i := range n {
			rows = append(rows, []any{45000.0 + float64(i), fmt.Sprintf("P%d", i), "x@y", "hello",
				[]string{"new", "", "read", "done"}[rng.IntN(4)], fmt.Sprintf("m%d-%d", seed, i), tag(i)})
		}
		return tc, rows
	case "requeue-stale", "clear-error-queue":
		tc := queueTab("Jobs")
		rows := [][]any{{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts", "tag"}}
		for i := range n {
			st, by, at, le := "pending", "", "", ""
			switch rng.IntN(3) {
			case 0:
				st, by, at = "claimed", "w1", "2020-01-01T00:00:00Z"
			case 1:
				st, le = "error", "boom"
			}
			rows = append(rows, []any{fmt.Sprintf("j%d-%d", seed, i), "send", "{}", st, by, at, le, "", 1.0, tag(i)})
		}
		return tc, rows
	default: // dead letters
		return deadTab("failed_calls"), randomDeadLetters(rng, seed, n, []any{"replayed_at", "tag"}, func(i int) []any { return []any{"", tag(i)} })
	}
}

// adversaryEdits are the edits one path makes, as its caller builds them.
func adversaryEdits(path string, tab *model.Table, rng *rand.Rand) []model.Edit {
	var out []model.Edit
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range tab.Records {
		r := &tab.Records[i]
		if rng.IntN(3) == 0 {
			continue
		}
		switch path {
		case "set-status", "undo":
			next := []string{"read", "replied", "done", "spam"}[rng.IntN(4)]
			if next != tab.Get(r, model.FStatus) {
				out = append(out, model.SetStatus(tab, r, next))
			}
		case "mark-read":
			if st := tab.Get(r, model.FStatus); st == "new" || st == "" {
				out = append(out, model.SetStatus(tab, r, "read"))
			}
		case "discard":
			if tab.Get(r, model.FStatus) != "discarded" {
				out = append(out, model.SetStatus(tab, r, "discarded"))
			}
		case "clear-error", "clear-error-queue":
			if e, ok := model.ClearError(tab, r, now); ok {
				out = append(out, e)
			}
		case "requeue-stale":
			if e, ok := model.Requeue(tab, r, now); ok {
				out = append(out, e)
			}
		case "payload-edit":
			old := tab.Get(r, model.FPayload)
			out = append(out, model.Edit{Tab: tab.Config.Name, ID: r.ID, Expect: map[model.Field]string{model.FPayload: old},
				Set: map[model.Field]string{model.FPayload: strings.TrimSuffix(old, "}") + `,"edited":true}`}})
		case "write-back":
			st := tab.Get(r, model.FStatus)
			out = append(out, model.Edit{Tab: tab.Config.Name, ID: r.ID, Expect: map[model.Field]string{model.FStatus: st},
				Set: map[model.Field]string{model.FStatus: []string{"delivered", "rejected", st}[rng.IntN(3)],
					model.FAttempts: strconv.Itoa(1 + rng.IntN(4)), model.FError: []string{"", "503 from crm"}[rng.IntN(2)],
					model.FReplayedAt: model.FormatTime(now)}})
		case "mint":
			// The pre-send check of replay.Run: the key written to an empty key cell, every
			// other row checked as loaded.
			key := tab.Get(r, model.FKey)
			set := key
			if key == "" {
				set = r.ID
			}
			out = append(out, model.Edit{Tab: tab.Config.Name, ID: r.ID,
				Expect: map[model.Field]string{model.FStatus: tab.Get(r, model.FStatus), model.FKey: key},
				Set:    map[model.Field]string{model.FKey: set}})
		}
	}
	return out
}

func adversaryCase(t *testing.T, f *fixture, seed int, stats map[string]int) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x15))
	path := adversaryPaths[seed%len(adversaryPaths)]
	kind := path
	if path == "clear-error" && seed%2 == 0 {
		kind = "clear-error-queue"
	}
	tc, rows := adversaryTab(kind, seed, rng)
	id := fmt.Sprintf("adv-%d", seed)
	s, wb := f.openTab(t, id, tc, rows, sheets.Options{Actor: "ann"}, "Etc/UTC")
	f.id = id
	tab := wb.Tabs[0]
	a := &adversary{t: t, f: f, id: id, tab: tc.Name, rng: rng, seed: seed, stats: stats, rows: map[string]map[string]string{}, lostAt: map[int]string{}}
	header := headerNames(a.cells())
	tagCol := slices.Index(header, "tag")
	for _, row := range a.cells()[1:] {
		a.rows[model.CellString(row[tagCol])] = rowContent(header, row)
	}
	// Which tag each edit's identity is on, as loaded.
	tagOf := map[string]string{}
	for i := range tab.Records {
		tagOf[tab.Records[i].ID] = tab.Records[i].Cells[slices.Index(tab.Header.Headers, "tag")]
	}
	for range rng.IntN(3) {
		a.lostAt[1+rng.IntN(5)] = []string{"drop", "503"}[rng.IntN(2)]
	}
	f.emu.SetHook(a.hook)
	defer f.emu.SetHook(nil)
	label := fmt.Sprintf("seed %d %s", seed, path)
	stats[path]++

	// What the applied edits set, by tag, in order; maybe what a killed write may have left
	// on its own rows.
	want := map[string]map[string]string{}
	maybe := map[string]map[string]string{}
	applySets := func(res model.ApplyResult, err error, edits []model.Edit) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: apply: %v", label, err)
		}
		checkOutcomes(t, label, edits, res, a, tagOf, stats)
		for _, ap := range res.Applied {
			tag := tagOf[ap.Edit.ID]
			if want[tag] == nil {
				want[tag] = map[string]string{}
			}
			for fld, v := range ap.Edit.Set {
				want[tag][tab.Header.Headers[tab.Header.Col(fld)]] = v
			}
		}
	}
	var letters []model.DeadLetter
	unsunk := map[string]bool{} // letters the sink said it could not record
	// tampered is how a person touched a dead write's journal ("" if not); then, with the
	// damage reported for the tab, the columns that write wrote may be wrong anywhere.
	tampered, damagedTab := "", false
	switch path {
	case "sink":
		for i := range 1 + rng.IntN(4) {
			letters = append(letters, model.DeadLetter{Timestamp: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), Source: "crm",
				URL: "https://x.example/h", Method: "POST", Payload: fmt.Sprintf(`{"id":"ord-%d-%d"}`, seed, i),
				Error: "503 from crm", Attempts: 3, Key: fmt.Sprintf("ord-%d-%d", seed, i)})
		}
		a.moving = true
		if err := s.DeadLetter(ctx(t), letters); err != nil {
			// The one failure allowed: columns moved under every try, and what landed under
			// them was cleared; then no letter may be on the sheet (checked below).
			if !strings.Contains(err.Error(), "kept changing while triage appended") || !strings.Contains(err.Error(), "nothing is left under the wrong columns") {
				t.Fatalf("%s: dead letter: %v", label, err)
			}
			stats["sink:kept-changing"]++
			for _, l := range letters {
				unsunk[l.Key] = true
			}
		}
	case "undo":
		edits := adversaryEdits(path, tab, rng)
		a.moving = true
		res, err := s.Apply(ctx(t), edits)
		applySets(res, err, edits)
		var inverse []model.Edit
		for _, ap := range res.Applied {
			inverse = append(inverse, ap.Edit.Inverse())
		}
		if len(inverse) > 0 {
			res, err := s.Apply(ctx(t), inverse)
			applySets(res, err, inverse)
		}
	default:
		edits := adversaryEdits(path, tab, rng)
		if len(edits) == 0 {
			return
		}
		if seed%3 == 0 {
			// The process dies after one of its writes; the next triage to write the tab
			// (a fresh store, once the lease has run out) settles what it left, while the
			// other editor goes on moving rows.
			a.crashAt = 1 + rng.IntN(3)
			c, kill := context.WithCancel(ctx(t))
			a.kill = kill
			a.moving = true
			res, err := s.Apply(c, edits)
			kill()
			if !a.crashed {
				applySets(res, err, edits)
				break
			}
			a.crashed = false
			f.emu.ClearFaults()
			// Sometimes a person finds the dead write's hidden journal before any triage has
			// settled it, and deletes it or edits one of its copies: nothing it did can be
			// proven now, and the next run must say so (damage), never take it for proof.
			if rng.IntN(4) == 0 {
				var newest string
				for _, sh := range f.emu.Workbook(id).Sheets {
					if strings.HasPrefix(sh.Title, "_triage_journal_") && sh.Title > newest {
						newest = sh.Title
					}
				}
				if newest != "" {
					if rng.IntN(2) == 0 {
						if err := f.emu.DeleteSheet(id, newest); err != nil {
							t.Fatal(err)
						}
						tampered = "delete"
					} else {
						if err := f.emu.SetCell(id, newest, 2, 1, "edited by a person"); err != nil {
							t.Fatal(err)
						}
						tampered = "edit"
					}
					stats["journal:"+tampered]++
				}
			}
			// What the dead write may have landed, on its own rows: each edit whole, or not.
			for _, e := range edits {
				tag := tagOf[e.ID]
				if maybe[tag] == nil {
					maybe[tag] = map[string]string{}
				}
				for fld, v := range e.Set {
					maybe[tag][tab.Header.Headers[tab.Header.Col(fld)]] = v
				}
			}
			later := time.Now().Add(11 * time.Minute)
			f.emu.SetClock(func() time.Time { return later })
			defer f.emu.SetClock(time.Now)
			next := f.store(sheets.Options{SpreadsheetID: id, Tabs: []model.TabConfig{tc}, Actor: "ann"})
			if _, err := next.Load(ctx(t)); err != nil {
				t.Fatalf("%s: the next run's load: %v", label, err)
			}
			res, err = next.Apply(ctx(t), nil)
			if err != nil {
				t.Fatalf("%s: the next run: %v", label, err)
			}
			switch {
			case tampered == "" && len(res.Damaged) > 0:
				t.Errorf("%s: the next run: damage %v", label, res.Damaged)
			case tampered != "" && len(res.Damaged) == 0:
				t.Errorf("%s: the dead write's journal was %sed by a person, and the next run reported no damage: it took the journal for proof", label, tampered)
			case tampered != "":
				for _, d := range res.Damaged {
					if d.Tab == tc.Name {
						damagedTab = true
					}
				}
				if !damagedTab {
					t.Errorf("%s: damage %v names another tab than %s", label, res.Damaged, tc.Name)
				}
				damageSheet := false
				for _, sh := range f.emu.Workbook(id).Sheets {
					damageSheet = damageSheet || strings.HasPrefix(sh.Title, "triage: check "+tc.Name)
				}
				if !damageSheet {
					t.Errorf("%s: damage reported, but no damage sheet lists it", label)
				}
			}
			if len(res.Recovered) > 0 {
				stats["recovered"]++
			}
			s = next
			break
		}
		a.moving = true
		res, err := s.Apply(ctx(t), edits)
		applySets(res, err, edits)
	}
	a.moving = false
	f.emu.ClearFaults()

	// The sheet, row by row.
	after := a.cells()
	hdr := headerNames(after)
	seen := map[string]bool{}
	sunk := map[string]int{}
	if damagedTab {
		// The dead write's values may be anywhere its positions hit (a row inserted, a column
		// moved, before it wrote): nothing of it can be checked, which is what the damage and
		// its sheet tell a person. Only the rest of the case is checked.
		stats["damage:reported"]++
		after = after[:1]
	}
	for r := 1; r < len(after); r++ {
		got := rowContent(hdr, after[r])
		tag := got["tag"]
		if tag == "" {
			if len(got) == 0 {
				continue // a blank row: a misplaced dead letter cleared
			}
			if path == "sink" && got["key"] != "" {
				sunk[got["key"]]++
				checkLetter(t, label, got, letters)
				continue
			}
			t.Errorf("%s: row %d holds %v: junk no one wrote", label, r+1, got)
			continue
		}
		seen[tag] = true
		exp, ok := a.rows[tag]
		if !ok {
			t.Errorf("%s: row %d (%s) should have been deleted, or never existed: %v", label, r+1, tag, got)
			continue
		}
		exp = maps.Clone(exp)
		maps.Copy(exp, want[tag])
		for k, v := range exp {
			if v == "" {
				delete(exp, k)
			}
		}
		if want[tag] != nil {
			// The audit columns of a row an applied edit wrote: ann, and this call's time.
			if _, ok := got["triaged_by"]; ok {
				exp["triaged_by"] = "ann"
			}
			if v, ok := got["triaged_at"]; ok {
				exp["triaged_at"] = v
			}
		}
		if m := maybe[tag]; m != nil && !sameContent(got, exp) {
			// The killed write's edit of this row landed (whole): the row as the other editor
			// left it with that edit's cells, and its audit columns.
			exp = maps.Clone(exp)
			maps.Copy(exp, m)
			for k, v := range exp {
				if v == "" {
					delete(exp, k)
				}
			}
			for _, k := range []string{"triaged_by", "triaged_at"} {
				if v, ok := got[k]; ok {
					exp[k] = v
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(mergeKeys(exp, got))) {
			if got[k] != exp[k] {
				t.Errorf("%s: row %d (%s) %s = %q, want %q", label, r+1, tag, k, got[k], exp[k])
			}
		}
	}
	for tag := range a.rows {
		if !seen[tag] && !damagedTab {
			t.Errorf("%s: row %s is gone, though nobody deleted it", label, tag)
		}
	}
	for _, l := range letters {
		switch {
		case unsunk[l.Key] && sunk[l.Key] != 0:
			t.Errorf("%s: dead letter %s recorded %d times, though the append said nothing was left", label, l.Key, sunk[l.Key])
		case !unsunk[l.Key] && sunk[l.Key] != 1:
			t.Errorf("%s: dead letter %s recorded %d times, want once", label, l.Key, sunk[l.Key])
		}
	}
	if err := s.Close(ctx(t)); err != nil {
		t.Fatalf("%s: close: %v", label, err)
	}
	for _, sh := range f.emu.Workbook(id).Sheets {
		if strings.HasPrefix(sh.Title, "_triage_journal_") {
			t.Errorf("%s: journal sheet %s left after Close", label, sh.Title)
		}
	}
	if f.emu.Count(mBatchUpdate) > 2 {
		stats["repaired"]++
	}
	f.reset()
}

// sameContent reports whether two rows (by header) hold the same values.
func sameContent(a, b map[string]string) bool {
	for k := range mergeKeys(a, b) {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

func mergeKeys(a, b map[string]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// checkOutcomes: every edit in exactly one list; missing only if its row was deleted; a
// conflict only when the sheet kept changing; no damage.
func checkOutcomes(t *testing.T, label string, edits []model.Edit, res model.ApplyResult, a *adversary, tagOf map[string]string, stats map[string]int) {
	t.Helper()
	if n := len(res.Applied) + len(res.Conflicts) + len(res.Missing); n != len(edits) {
		t.Errorf("%s: %d edits, %d outcomes", label, len(edits), n)
	}
	if len(res.Damaged) > 0 {
		t.Errorf("%s: damage %v", label, res.Damaged)
	}
	for _, e := range res.Missing {
		if _, alive := a.rows[tagOf[e.ID]]; alive {
			t.Errorf("%s: %s reported missing, but its row is there", label, e.ID)
		}
	}
	for _, c := range res.Conflicts {
		if !strings.Contains(c.Reason, "kept changing") {
			t.Errorf("%s: conflict %v", label, c)
		}
	}
	stats["→applied"] += len(res.Applied)
	stats["→missing"] += len(res.Missing)
	stats["→conflict"] += len(res.Conflicts)
}

// checkLetter: a sink row is one of the letters, whole, under the right headers.
func checkLetter(t *testing.T, label string, got map[string]string, letters []model.DeadLetter) {
	t.Helper()
	for _, l := range letters {
		if l.Key != got["key"] {
			continue
		}
		want := map[string]string{"timestamp": model.FormatTime(l.Timestamp), "source": l.Source, "url": l.URL, "payload": l.Payload,
			"error": l.Error, "attempts": strconv.Itoa(l.Attempts), "key": l.Key, "status": "dead"}
		for k, v := range got {
			if strings.HasPrefix(k, "extra") {
				continue // a column inserted after the append: the other editor's
			}
			if want[k] != v {
				t.Errorf("%s: dead letter %s: %s = %q, want %q", label, l.Key, k, v, want[k])
			}
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: dead letter %s: %s = %q, want %q", label, l.Key, k, got[k], v)
			}
		}
		return
	}
	t.Errorf("%s: a row with key %q that no letter has: %v", label, got["key"], got)
}
