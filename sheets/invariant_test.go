package sheets_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Invariant 1, randomised: between a load and a write, another writer inserts rows above,
// sorts, deletes target rows, reorders or inserts columns, changes a target's status or
// duplicates its ID. Every write must land on the row that has the edit's ID, or be
// reported as a conflict (the cell changed / the ID is ambiguous) or missing (the row is
// gone); no other cell may change, and every edit is in exactly one list.
func TestInvariant1Randomised(t *testing.T) {
	f := newFixture(t, nil)
	counts := map[string]int{}
	for seed, rng := range testbed.Seeds(t, testbed.CaseCount(300, 60, ""), 0x7e57, "") {
		id := fmt.Sprintf("inv-%d", seed)
		header := slices.Clone(inboxHeader)
		audit := rng.IntN(3) == 0
		if audit {
			header = append(header, "triaged_by")
		}
		rows := randomInbox(rng, seed, header)
		s, wb := f.openTab(t, id, inboxTab("", "new", "read", "replied", "done", "spam"), rows, sheets.Options{Actor: "bot"})
		tab := wb.Tab(model.RoleInbox)

		edits := statusEdits(rng, tab)

		// The other writer.
		var ops []string
		for range 1 + rng.IntN(3) {
			op := mutate(t, f, id, rng, edits, inboxStatuses)
			ops = append(ops, op)
			counts[op]++
		}

		before := f.emu.Cells(id, "Inbox")
		res, err := s.Apply(ctx(t), edits)
		if err != nil {
			t.Fatalf("seed %d (%v): apply: %v", seed, ops, err)
		}
		after := f.emu.Cells(id, "Inbox")
		checkInvariant1(t, fmt.Sprintf("seed %d %v", seed, ops), before, after, edits, res)
		counts["→conflict"] += len(res.Conflicts)
		counts["→missing"] += len(res.Missing)
		counts["→applied"] += len(res.Applied)
	}
	t.Logf("operations and outcomes: %v", counts)
	testbed.Exercised(t, counts, "→conflict", "→missing", "→applied", "insert-above", "sort", "delete-target", "reorder-columns", "insert-column", "change-status", "duplicate-id")
}

// Invariant 1 across a retried write, randomised: the first batchUpdate fails with a 503,
// performed or not (its answer lost), and during the backoff another writer inserts rows,
// sorts, deletes targets, moves columns, changes statuses or duplicates IDs. A write that
// landed is proven by its journal entry (applied, where it landed, never written again: what
// the other writer did afterwards stands); one that didn't is fenced, and the edits are
// located again and land on their ID's current row; every other cell is left alone.
// inboxStatuses are the statuses of the randomised Inbox rows (the last: none).
var inboxStatuses = []string{"new", "read", "replied", "done", "spam", ""}

// randomInbox is an Inbox grid under header: 4 to 17 rows (case seed) of a few names and
// messages, any status or none, each with its own ID.
func randomInbox(rng *rand.Rand, seed int, header []any) [][]any {
	rows := [][]any{header}
	for i := range 4 + rng.IntN(14) {
		rows = append(rows, []any{45000.0 + float64(rng.IntN(1000)), fmt.Sprintf("P%d", rng.IntN(5)), "x@y", fmt.Sprintf("msg %d", rng.IntN(7)),
			inboxStatuses[rng.IntN(len(inboxStatuses))], fmt.Sprintf("s%d-%d", seed, i)})
	}
	return rows
}

// statusEdits are 1-3 distinct targets of tab, each set to a status other than the one seen.
func statusEdits(rng *rand.Rand, tab *model.Table) []model.Edit {
	perm := rng.Perm(len(tab.Records))
	var edits []model.Edit
	for _, i := range perm[:1+rng.IntN(min(3, len(perm)))] {
		rec := &tab.Records[i]
		next := inboxStatuses[rng.IntN(len(inboxStatuses)-1)]
		for next == tab.Get(rec, model.FStatus) {
			next = inboxStatuses[rng.IntN(len(inboxStatuses)-1)]
		}
		edits = append(edits, model.SetStatus(tab, rec, next))
	}
	return edits
}

func TestInvariant1RandomisedRetry(t *testing.T) {
	f := newFixture(t, nil)
	counts := map[string]int{}
	for seed, rng := range testbed.Seeds(t, testbed.CaseCount(150, 40, ""), 0x2e72, "") {
		id := fmt.Sprintf("retry-%d", seed)
		header := slices.Clone(inboxHeader)
		if rng.IntN(2) == 0 {
			header = append(header, "triaged_by")
		}
		rows := randomInbox(rng, seed, header)
		f.emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: id, Title: id, Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}})
		var (
			edits []model.Edit
			ops   []string
			mid   [][]any
			hooks int
		)
		sleep := func(ctx context.Context, _ time.Duration) error {
			hooks++
			if hooks == 1 {
				for range 1 + rng.IntN(3) {
					op := mutate(t, f, id, rng, edits, inboxStatuses)
					ops = append(ops, op)
					counts[op]++
				}
			}
			mid = f.emu.Cells(id, "Inbox")
			return ctx.Err()
		}
		s := f.store(sheets.Options{SpreadsheetID: id, Tabs: []model.TabConfig{inboxTab("", "new", "read", "replied", "done", "spam")}, Actor: "bot", Retry: sheets.RetryPolicy{Sleep: sleep}})
		wb, err := s.Load(ctx(t))
		if err != nil {
			t.Fatalf("seed %d: load: %v", seed, err)
		}
		tab := wb.Tab(model.RoleInbox)
		edits = statusEdits(rng, tab)
		landed := rng.IntN(2) == 0
		f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: landed})
		f.reset()
		res, err := s.Apply(ctx(t), edits)
		f.emu.ClearFaults()
		label := fmt.Sprintf("seed %d landed=%v %v", seed, landed, ops)
		if err != nil {
			t.Fatalf("%s: apply: %v", label, err)
		}
		if hooks != 1 {
			t.Fatalf("%s: backed off %d times, want 1", label, hooks)
		}
		if landed {
			// The journal proves the lost write landed, on the rows as loaded (nothing moved
			// before it): every edit is applied there, and nothing is written again, so the
			// sheet is exactly as the other writer left it. The fence is the only other write.
			if len(res.Applied) != len(edits) {
				t.Errorf("%s: %d of %d edits applied (%s), want all: the journal shows the write landed", label, len(res.Applied), len(edits), res.Summary())
			}
			for _, a := range res.Applied {
				if got := cellAt(rows, a.Row-1, 5); got != a.Edit.ID {
					t.Errorf("%s: %s reported at row %d, which held %q when the write landed", label, a.Edit.ID, a.Row, got)
				}
			}
			if got, want := f.emu.Cells(id, "Inbox"), mid; !slices.EqualFunc(got, want, func(a, b []any) bool { return slices.Equal(a, b) }) {
				t.Errorf("%s: the sheet changed after the landed write: %v, want %v", label, got, want)
			}
			if n := f.emu.Count(mBatchUpdate); n != 2 {
				t.Errorf("%s: %d batchUpdates, want 2 (the write, the fence)", label, n)
			}
		} else {
			// Fenced before it landed: it never will, and the edits are located again.
			checkInvariant1(t, label, mid, f.emu.Cells(id, "Inbox"), edits, res)
			if n := f.emu.Count(mBatchUpdate); n > 3 {
				t.Errorf("%s: %d batchUpdates, want at most 3 (the write, the fence, the write again)", label, n)
			}
		}
		if landed {
			counts["landed"]++
		}
		counts["→conflict"] += len(res.Conflicts)
		counts["→missing"] += len(res.Missing)
		counts["→applied"] += len(res.Applied)
	}
	t.Logf("operations and outcomes: %v", counts)
	testbed.Exercised(t, counts, "landed", "→conflict", "→missing", "→applied", "insert-above", "sort", "delete-target", "reorder-columns", "insert-column", "change-status", "duplicate-id")
}

// mutate applies one random change as another writer would, directly in the emulator.
func mutate(t *testing.T, f *fixture, id string, rng *rand.Rand, edits []model.Edit, statuses []string) string {
	t.Helper()
	cells := f.emu.Cells(id, "Inbox")
	hdr := headerIndex(cells)
	idCol, stCol := hdr["id"], hdr["status"]
	rowOf := func(target string) int { // 1-based, 0 if absent
		for r := 1; r < len(cells); r++ {
			if cellAt(cells, r, idCol) == target {
				return r + 1
			}
		}
		return 0
	}
	target := edits[rng.IntN(len(edits))].ID
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	switch rng.IntN(7) {
	case 0:
		k := 1 + rng.IntN(3)
		var add [][]any
		for j := range k {
			row := make([]any, len(cells[0]))
			row[idCol] = fmt.Sprintf("new-%d-%d", rng.IntN(1e6), j)
			row[stCol] = "new"
			add = append(add, row)
		}
		must(f.emu.InsertRows(id, "Inbox", 2+rng.IntN(len(cells)-1), add))
		return "insert-above"
	case 1:
		must(f.emu.SortRows(id, "Inbox", rng.IntN(len(cells[0])), rng.IntN(2) == 0))
		return "sort"
	case 2:
		if r := rowOf(target); r > 0 && len(cells) > 2 {
			must(f.emu.DeleteRow(id, "Inbox", r))
		}
		return "delete-target"
	case 3:
		perm := rng.Perm(len(cells[0]))
		rewrite(f, id, cells, func(row []any) []any {
			out := make([]any, len(perm))
			for i, p := range perm {
				if p < len(row) {
					out[i] = row[p]
				}
			}
			return out
		})
		return "reorder-columns"
	case 4:
		at := rng.IntN(len(cells[0]) + 1)
		first := true
		rewrite(f, id, cells, func(row []any) []any {
			for len(row) < len(cells[0]) {
				row = append(row, nil)
			}
			v := any(fmt.Sprintf("x%d", rng.IntN(9)))
			if first {
				v, first = "Extra", false
			}
			return slices.Insert(slices.Clone(row), at, v)
		})
		return "insert-column"
	case 5:
		if r := rowOf(target); r > 0 {
			must(f.emu.SetCell(id, "Inbox", r, stCol, statuses[rng.IntN(len(statuses))]))
		}
		return "change-status"
	default:
		if r := rowOf(target); r > 0 {
			dup := slices.Clone(cells[r-1])
			must(f.emu.InsertRows(id, "Inbox", 2+rng.IntN(len(cells)-1), [][]any{dup}))
		}
		return "duplicate-id"
	}
}

// rewrite replaces the whole tab with fn applied to every row (header included).
func rewrite(f *fixture, id string, cells [][]any, fn func([]any) []any) {
	wb := f.emu.Workbook(id)
	var rows [][]any
	for _, r := range cells {
		rows = append(rows, fn(slices.Clone(r)))
	}
	wb.Sheets[0].Rows = rows
	wb.Sheets[0].RowCount, wb.Sheets[0].ColumnCount = 0, 0
	wb.Sheets[0].Hidden = nil
	f.emu.AddWorkbook(wb)
}

// headerIndex maps a lower-cased header to its column.
func headerIndex(cells [][]any) map[string]int {
	m := map[string]int{}
	if len(cells) == 0 {
		return m
	}
	for i, v := range cells[0] {
		h := strings.ToLower(model.CellString(v))
		if _, dup := m[h]; !dup {
			m[h] = i
		}
	}
	return m
}

// checkInvariant1 derives the expected outcome of every edit from the sheet as it was just
// before the write, and compares the sheet after it with the expected one, cell by cell.
// With retried set, before is the sheet just before a write retried after a failed one:
// an edit whose row already holds its new status is applied, with nothing written.
func checkInvariant1(t *testing.T, label string, before, after [][]any, edits []model.Edit, res model.ApplyResult) {
	t.Helper()
	hdr := headerIndex(before)
	idCol, stCol := hdr["id"], hdr["status"]
	byCol, hasBy := hdr["triaged_by"]
	expected := make([][]string, len(before))
	for r, row := range before {
		expected[r] = make([]string, len(row))
		for c, v := range row {
			expected[r][c] = model.CellString(v)
		}
	}
	set := func(r, c int, v string) {
		for len(expected[r]) <= c {
			expected[r] = append(expected[r], "")
		}
		expected[r][c] = v
	}
	where := map[string]string{}
	for _, a := range res.Applied {
		where[a.Edit.ID] += "applied "
	}
	for _, c := range res.Conflicts {
		where[c.Edit.ID] += "conflict "
	}
	for _, m := range res.Missing {
		where[m.ID] += "missing "
	}
	if got := len(res.Applied) + len(res.Conflicts) + len(res.Missing); got != len(edits) {
		t.Errorf("%s: %d edits, %d outcomes", label, len(edits), got)
	}
	for _, e := range edits {
		var found []int
		for r := 1; r < len(before); r++ {
			if cellAt(before, r, idCol) == e.ID {
				found = append(found, r)
			}
		}
		want := "applied "
		switch {
		case len(found) == 0:
			want = "missing "
		case len(found) > 1:
			want = "conflict "
		case cellAt(before, found[0], stCol) != e.Expect[model.FStatus]:
			want = "conflict "
		default:
			set(found[0], stCol, e.Set[model.FStatus])
			if hasBy {
				set(found[0], byCol, "bot")
			}
			for _, a := range res.Applied {
				if a.Edit.ID == e.ID && a.Row != found[0]+1 {
					t.Errorf("%s: %s reported at row %d, is at row %d", label, e.ID, a.Row, found[0]+1)
				}
			}
		}
		if where[e.ID] != want {
			t.Errorf("%s: edit %s is %q, want %q", label, e, where[e.ID], want)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%s: %d rows after the write, %d before", label, len(after), len(before))
	}
	for r := 0; r < max(len(after), len(expected)); r++ {
		w := 0
		if r < len(expected) {
			w = len(expected[r])
		}
		if r < len(after) {
			w = max(w, len(after[r]))
		}
		for c := range w {
			exp := ""
			if r < len(expected) && c < len(expected[r]) {
				exp = expected[r][c]
			}
			if got := cellAt(after, r, c); got != exp {
				t.Errorf("%s: cell row %d col %d = %q, want %q", label, r+1, c, got, exp)
			}
		}
	}
}
