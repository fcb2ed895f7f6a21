package sheets_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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

// Invariant 1 where it is hardest: another editor sorts, inserts and deletes rows in the
// instant between Apply's locate read and its write (the emulator's hook runs before each
// request), and again before one in three of the later writes (the write that puts our values
// back, the repair), and before one read in four. For set-status on the Inbox, clear-error and the pre-send key write on
// failed_calls, and requeue-stale and clear-error on Jobs.
//
// After each case the sheet is compared, row by row (by identity, whole content), with what
// it must hold: every row as the other editor left it, plus the applied edits on their own
// rows. No value of ours may remain on another row, every key is on its own row, and every
// edit is reported as what happened to it: applied (and then on its row), missing (its row
// was deleted), or a conflict only when rows kept moving past the bound.
func TestInvariant1MovesBetweenReadAndWrite(t *testing.T) {
	f := newFixture(t, nil)
	counts := map[string]int{}
	for seed, rng := range testbed.Seeds(t, testbed.CaseCount(600, 100, ""), 0xa11ce, "MOVES_SEED") {
		kind := []string{"inbox", "deadletter", "queue"}[seed%3]
		id := fmt.Sprintf("moves-%d", seed)
		tc, rows := movesTab(kind, seed, rng)
		s, wb := f.openTab(t, id, tc, rows, sheets.Options{})
		tab := wb.Tabs[0]
		edits := movesEdits(kind, tab, rng)
		if len(edits) == 0 {
			t.Fatalf("seed %d: no edits", seed)
		}
		ref := newReference(t, tc, f.emu.Cells(id, tc.Name))

		// The other editor. Rows it inserts hold nothing in the columns triage writes: a
		// row inserted a moment ago is blank there (TestApplyStrayOnInsertedRow is the other
		// case). It never edits a cell (no compare-and-set exists for that: the issue is
		// rows moving, not racing edits).
		var (
			ops    []string
			writes int
		)
		setLockedHook(f, func(r emulator.Request) {
			move := false
			switch r.Method {
			case mBatchGet:
				move = rng.IntN(4) == 0
			case mBatchUpdate:
				// Every write: the edits', the one that puts our values back where its answer
				// showed them, and every repair.
				writes++
				move = writes == 1 || rng.IntN(3) == 0
			}
			if !move {
				return
			}
			for range 1 + rng.IntN(2) {
				op := moveRows(t, f, id, tc, ref, rng, seed)
				ops = append(ops, r.Method+":"+op)
				counts[op]++
			}
		})
		res, err := s.Apply(ctx(t), edits)
		f.emu.SetHook(nil)
		label := fmt.Sprintf("seed %d %s %v", seed, kind, ops)
		if err != nil {
			// Only when rows kept moving through every round may values be left: the error
			// must say so, and the test's bound makes that rare; fail loudly to look at it.
			t.Fatalf("%s: apply: %v", label, err)
		}
		if writes > 1 {
			counts["repaired"]++
		}
		counts["writes"] += writes
		after := f.emu.Cells(id, tc.Name)
		checkMoves(t, label, tc, ref, after, edits, res, counts)
	}
	t.Logf("operations and outcomes: %v", counts)
	testbed.Exercised(t, counts, "sort", "insert", "delete", "repaired", "→applied", "→missing")
}

// randomDeadLetters is a failed_calls grid of n rows (case seed): dead, a third of them
// rejected (422) and a third holding a key of their own; extraHeader names more columns,
// and extra(i) gives row i's cells in them.
func randomDeadLetters(rng *rand.Rand, seed, n int, extraHeader []any, extra func(i int) []any) [][]any {
	rows := [][]any{append([]any{"timestamp", "source", "url", "payload", "error", "attempts", "key", "status"}, extraHeader...)}
	for i := range n {
		st, errText, key := "dead", "", ""
		switch rng.IntN(3) {
		case 0:
			st, errText = "rejected", "422 bad"
		case 1:
			key = fmt.Sprintf("k%d-%d", seed, i)
		}
		row := []any{45000.0 + float64(i), []string{"crm", "billing"}[rng.IntN(2)], "https://x.example/h",
			fmt.Sprintf(`{"n":%d,"s":%d}`, i, seed), errText, float64(rng.IntN(3)), key, st}
		if extra != nil {
			row = append(row, extra(i)...)
		}
		rows = append(rows, row)
	}
	return rows
}

// movesTab is one tab of a kind, with rows to act on.
func movesTab(kind string, seed int, rng *rand.Rand) (model.TabConfig, [][]any) {
	n := 5 + rng.IntN(12)
	switch kind {
	case "deadletter":
		return deadTab("failed_calls"), randomDeadLetters(rng, seed, n, nil, nil)
	case "queue":
		tc := queueTab("Jobs")
		rows := [][]any{{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"}}
		for i := range n {
			st, by, at, le := "pending", "", "", ""
			switch rng.IntN(3) {
			case 0:
				st, by, at = "claimed", "w1", "2020-01-01T00:00:00Z"
			case 1:
				st, le = "error", "boom"
			}
			rows = append(rows, []any{fmt.Sprintf("j%d-%d", seed, i), "send", "{}", st, by, at, le, "", 1.0})
		}
		return tc, rows
	}
	tc := inboxTab("Inbox", "new", "read", "replied", "done", "spam")
	rows := [][]any{slices.Clone(inboxHeader)}
	for i := range n {
		rows = append(rows, []any{45000.0 + float64(rng.IntN(1000)), fmt.Sprintf("P%d", rng.IntN(5)), "x@y", fmt.Sprintf("msg %d", rng.IntN(4)),
			[]string{"new", "read", "done", ""}[rng.IntN(4)], fmt.Sprintf("s%d-%d", seed, i)})
	}
	return tc, rows
}

// movesEdits picks 1-4 rows and builds the edit the command would.
func movesEdits(kind string, tab *model.Table, rng *rand.Rand) []model.Edit {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var edits []model.Edit
	for _, i := range rng.Perm(len(tab.Records)) {
		if len(edits) == 1+rng.IntN(4) {
			break
		}
		rec := &tab.Records[i]
		switch kind {
		case "inbox":
			next := []string{"read", "replied", "done", "spam"}[rng.IntN(4)]
			if next != tab.Get(rec, model.FStatus) {
				edits = append(edits, model.SetStatus(tab, rec, next))
			}
		case "deadletter":
			if e, ok := model.ClearError(tab, rec, now); ok {
				edits = append(edits, e)
			} else if tab.Get(rec, model.FKey) == "" {
				// The pre-send key write of a replay (replay.checkRows).
				edits = append(edits, model.Edit{Tab: tab.Config.Name, ID: rec.ID,
					Expect: map[model.Field]string{model.FStatus: tab.Get(rec, model.FStatus), model.FKey: ""},
					Set:    map[model.Field]string{model.FKey: rec.ID}})
			}
		case "queue":
			if e, ok := model.Requeue(tab, rec, now); ok {
				edits = append(edits, e)
			} else if e, ok := model.ClearError(tab, rec, now); ok {
				edits = append(edits, e)
			}
		}
	}
	return edits
}

// reference is what every row must hold, by identity, whatever the other editor did: it
// follows the other editor's inserts and deletes.
type reference struct {
	tc   model.TabConfig
	rows map[string]map[string]string // identity → header → value
	// deleted are identities the other editor deleted.
	deleted map[string]bool
}

func newReference(t *testing.T, tc model.TabConfig, cells [][]any) *reference {
	t.Helper()
	ref := &reference{tc: tc, rows: map[string]map[string]string{}, deleted: map[string]bool{}}
	for _, r := range identities(t, tc, cells) {
		if _, dup := ref.rows[r.id]; dup {
			t.Fatalf("fixture has identity %q twice", r.id)
		}
		ref.rows[r.id] = r.content
	}
	return ref
}

type identified struct {
	id      string
	row     int // 1-based
	content map[string]string
}

// identities reads every data row of a tab: its identity (as the store computes it) and its
// content by lower-cased header.
func identities(t *testing.T, tc model.TabConfig, cells [][]any) []identified {
	t.Helper()
	if len(cells) == 0 {
		return nil
	}
	header := make([]string, len(cells[0]))
	for i, v := range cells[0] {
		header[i] = model.CellString(v)
	}
	hm, err := model.MapHeaders(tc, header)
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	var out []identified
	for r := 1; r < len(cells); r++ {
		row := make([]string, max(len(header), len(cells[r])))
		content := map[string]string{}
		for c, v := range cells[r] {
			row[c] = model.CellString(v)
			if row[c] != "" {
				content[strings.ToLower(header[c])] = row[c]
			}
		}
		if len(content) == 0 {
			continue
		}
		out = append(out, identified{id: model.RowIdentity(tc, hm, row), row: r + 1, content: content})
	}
	return out
}

// moveRows is one move by the other editor: a sort, an insert of fresh rows, or a delete.
func moveRows(t *testing.T, f *fixture, id string, tc model.TabConfig, ref *reference, rng *rand.Rand, seed int) string {
	t.Helper()
	cells := f.emu.Cells(id, tc.Name)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	switch rng.IntN(3) {
	case 0:
		must(f.emu.SortRows(id, tc.Name, rng.IntN(len(cells[0])), rng.IntN(2) == 0))
		return "sort"
	case 1:
		var add [][]any
		for range 1 + rng.IntN(2) {
			n := rng.IntN(1e9)
			row := make([]any, len(cells[0]))
			for c, h := range cells[0] {
				switch strings.ToLower(model.CellString(h)) {
				case "id":
					row[c] = fmt.Sprintf("fresh-%d-%d", seed, n)
				case "payload":
					row[c] = fmt.Sprintf(`{"fresh":%d}`, n)
				case "source":
					row[c] = "crm"
				case "url":
					row[c] = "https://x.example/h"
				case "message", "name", "type":
					row[c] = fmt.Sprintf("fresh %d", n)
				}
			}
			add = append(add, row)
		}
		must(f.emu.InsertRows(id, tc.Name, 2+rng.IntN(len(cells)-1), add))
		for _, r := range identities(t, tc, append([][]any{cells[0]}, add...)) {
			ref.rows[r.id] = r.content
		}
		return "insert"
	default:
		if len(cells) <= 2 {
			return "delete-none"
		}
		r := 2 + rng.IntN(len(cells)-1)
		// The identity of the row deleted, as it reads now (it may hold a value of ours
		// that is about to be restored: its identity is its own unless ours is a key).
		for _, x := range identities(t, tc, cells) {
			if x.row == r {
				del := x.id
				if tc.Role == model.RoleDeadLetter {
					// A dead letter's identity may be a key of ours not yet put back: find the
					// row by its payload (unique in these tabs), which no write touches.
					del = ref.byPayload(x.content["payload"])
				}
				delete(ref.rows, del)
				ref.deleted[del] = true
			}
		}
		must(f.emu.DeleteRow(id, tc.Name, r))
		return "delete"
	}
}

// byPayload finds the identity of the reference row with a payload.
func (ref *reference) byPayload(payload string) string {
	for id, want := range ref.rows {
		if want["payload"] == payload {
			return id
		}
	}
	return ""
}

// checkMoves compares the sheet after Apply with the reference plus the applied edits, and
// the reported outcome of each edit with what happened to its row.
func checkMoves(t *testing.T, label string, tc model.TabConfig, ref *reference, after [][]any, edits []model.Edit, res model.ApplyResult, counts map[string]int) {
	t.Helper()
	want := map[string]map[string]string{}
	for id, c := range ref.rows {
		want[id] = maps.Clone(c)
	}
	outcome := map[string]string{}
	for _, a := range res.Applied {
		outcome[a.Edit.ID] += "applied "
		counts["→applied"]++
		if w := want[a.Edit.ID]; w != nil {
			for f, v := range a.Edit.Set {
				if k := strings.ToLower(string(f)); v == "" {
					delete(w, k)
				} else {
					w[k] = v
				}
			}
		}
	}
	for _, c := range res.Conflicts {
		outcome[c.Edit.ID] += "conflict "
		counts["→conflict"]++
		if !strings.Contains(c.Reason, "kept changing") {
			t.Errorf("%s: conflict that is not rows moving past the bound: %s", label, c)
		}
	}
	for _, m := range res.Missing {
		outcome[m.ID] += "missing "
		counts["→missing"]++
	}
	for _, e := range edits {
		o := outcome[e.ID]
		switch {
		case ref.deleted[e.ID]:
			if o != "missing " && o != "applied " && o != "conflict " {
				t.Errorf("%s: edit of deleted row %s reported %q", label, e.ID, o)
			}
		case o != "applied " && o != "conflict ":
			t.Errorf("%s: edit %s reported %q, want applied (its row is there and unchanged)", label, e.ID, o)
		}
	}
	got := map[string]map[string]string{}
	for _, r := range identities(t, tc, after) {
		if _, dup := got[r.id]; dup {
			t.Errorf("%s: identity %q on two rows after the write (a key moved?)", label, r.id)
		}
		got[r.id] = r.content
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("%s: row %q is gone or lost its identity", label, id)
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(merge(w, g))) {
			// An attempts number is read back as float; compare as text.
			if g[k] != w[k] {
				t.Errorf("%s: row %q column %s = %q, want %q", label, id, k, g[k], w[k])
			}
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: unexpected row %q after the write: %v", label, id, got[id])
		}
	}
	if tc.Role == model.RoleDeadLetter {
		checkKeysOnOwnRows(t, label, tc, after)
	}
}

func merge(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

// checkKeysOnOwnRows: a key cell that holds a value holds the row's own key (the one its
// content gives: the key cell was empty before, so it is the minted or payload key).
func checkKeysOnOwnRows(t *testing.T, label string, tc model.TabConfig, after [][]any) {
	t.Helper()
	header := make([]string, len(after[0]))
	for i, v := range after[0] {
		header[i] = model.CellString(v)
	}
	hm, _ := model.MapHeaders(tc, header)
	kc := hm.Col(model.FKey)
	for r := 1; r < len(after); r++ {
		row := make([]string, max(len(header), len(after[r])))
		for c, v := range after[r] {
			row[c] = model.CellString(v)
		}
		k := row[kc]
		if k == "" || strings.HasPrefix(k, "k") {
			continue // empty, or a key the fixture put there
		}
		row[kc] = ""
		if own, _, _ := model.EffectiveKey(tc, hm, row); own != k {
			t.Errorf("%s: row %d holds key %q, its own is %q (a key on another row)", label, r+1, k, own)
		}
	}
}

// The worst case of invariant 1: rows move between Apply's read and its write, the write
// lands on the wrong rows, and its answer is lost (a 503 after the write was applied), so
// there is no read-back to check. With a triaged_at column the write left this Apply's stamp
// on every row it hit: the retry must find the rows that are not targets by that stamp, put
// back what they held, and still land every edit on its own row.
func TestApplyLostAnswerWhileRowsMoved(t *testing.T) {
	f := newFixture(t, nil)
	counts := map[string]int{}
	for seed, rng := range testbed.Seeds(t, testbed.CaseCount(150, 40, ""), 0x10570, "") {
		id := fmt.Sprintf("lost-%d", seed)
		tc := inboxTab("Inbox", "new", "read", "replied", "done", "spam")
		rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID", "triaged_by", "triaged_at"}}
		for i := range 4 + rng.IntN(12) {
			rows = append(rows, []any{45000.0 + float64(rng.IntN(1000)), fmt.Sprintf("P%d", rng.IntN(5)), "x@y", fmt.Sprintf("msg %d", i),
				[]string{"new", "read", "done", ""}[rng.IntN(4)], fmt.Sprintf("l%d-%d", seed, i), "", ""})
		}
		s, wb := f.openTab(t, id, tc, rows, sheets.Options{Actor: "bot"})
		tab := wb.Tabs[0]
		var edits []model.Edit
		for _, i := range rng.Perm(len(tab.Records))[:1+rng.IntN(4)] {
			rec := &tab.Records[i]
			next := []string{"read", "replied", "done", "spam"}[rng.IntN(4)]
			if next != tab.Get(rec, model.FStatus) {
				edits = append(edits, model.SetStatus(tab, rec, next))
			}
		}
		if len(edits) == 0 {
			continue
		}
		ref := newReference(t, tc, f.emu.Cells(id, "Inbox"))
		var (
			ops    []string
			writes int
		)
		setLockedHook(f, func(r emulator.Request) {
			if r.Method != mBatchUpdate {
				return
			}
			if writes++; writes == 2 {
				// Before the retry: rows that are not targets but hold a stamp were hit by the
				// lost write.
				targets := map[string]bool{}
				for _, e := range edits {
					targets[e.ID] = true
				}
				for _, x := range identities(t, tc, f.emu.Cells(id, "Inbox")) {
					if x.content["triaged_at"] != "" && !targets[x.id] {
						counts["stray-found"]++
					}
				}
			}
			if writes == 1 {
				for range 1 + rng.IntN(2) {
					op := moveRows(t, f, id, tc, ref, rng, seed)
					ops = append(ops, op)
					counts[op]++
				}
			}
		})
		f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: true})
		res, err := s.Apply(ctx(t), edits)
		f.emu.SetHook(nil)
		f.emu.ClearFaults()
		label := fmt.Sprintf("seed %d %v", seed, ops)
		if err != nil {
			t.Fatalf("%s: apply: %v", label, err)
		}
		after := f.emu.Cells(id, "Inbox")
		applied := map[string]string{}
		for _, a := range res.Applied {
			applied[a.Edit.ID] = a.Edit.Set[model.FStatus]
			counts["→applied"]++
		}
		for _, c := range res.Conflicts {
			t.Errorf("%s: conflict: %s", label, c)
		}
		for _, m := range res.Missing {
			counts["→missing"]++
			if !ref.deleted[m.ID] {
				t.Errorf("%s: %s reported missing, its row is there", label, m.ID)
			}
		}
		got := map[string]map[string]string{}
		for _, r := range identities(t, tc, after) {
			got[r.id] = r.content
		}
		for rid, want := range ref.rows {
			g := maps.Clone(got[rid])
			if g == nil {
				t.Errorf("%s: row %s gone", label, rid)
				continue
			}
			if st, ok := applied[rid]; ok {
				if g["status"] != st || g["triaged_by"] != "bot" || g["triaged_at"] == "" {
					t.Errorf("%s: applied %s holds %v", label, rid, g)
				}
				delete(g, "status")
				delete(g, "triaged_by")
				delete(g, "triaged_at")
				w := maps.Clone(want)
				delete(w, "status")
				want = w
			}
			if !maps.Equal(g, want) {
				t.Errorf("%s: row %s is %v, want %v", label, rid, g, want)
			}
		}
		if len(got) != len(ref.rows) {
			t.Errorf("%s: %d rows, want %d", label, len(got), len(ref.rows))
		}
	}
	t.Logf("operations and outcomes: %v", counts)
	testbed.Exercised(t, counts, "sort", "stray-found", "→applied")
}

// The same for the key write before a replay, on a failed_calls tab without a triaged_at
// column: the lost write left no stamp, but a key it sent marks the row it hit (a key is
// made for one row: the one whose content gives it). No key may end on another row.
func TestApplyLostAnswerKeysWhileRowsMoved(t *testing.T) {
	f := newFixture(t, nil)
	counts := map[string]int{}
	for seed, rng := range testbed.Seeds(t, testbed.CaseCount(300, 60, ""), 0x10571, "") {
		id := fmt.Sprintf("lostkey-%d", seed)
		tc, rows := movesTab("deadletter", seed, rng)
		s, wb := f.openTab(t, id, tc, rows, sheets.Options{})
		tab := wb.Tabs[0]
		var edits []model.Edit
		for i := range tab.Records {
			rec := &tab.Records[i]
			if tab.Get(rec, model.FKey) == "" && rng.IntN(2) == 0 {
				edits = append(edits, model.Edit{Tab: tab.Config.Name, ID: rec.ID,
					Expect: map[model.Field]string{model.FStatus: tab.Get(rec, model.FStatus), model.FKey: ""},
					Set:    map[model.Field]string{model.FKey: rec.ID}})
			}
		}
		if len(edits) == 0 {
			continue
		}
		ref := newReference(t, tc, f.emu.Cells(id, tc.Name))
		var writes int
		setLockedHook(f, func(r emulator.Request) {
			if r.Method == mBatchUpdate {
				if writes++; writes == 1 {
					counts[moveRows(t, f, id, tc, ref, rng, seed)]++
				}
			}
		})
		f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: true})
		res, err := s.Apply(ctx(t), edits)
		f.emu.SetHook(nil)
		f.emu.ClearFaults()
		if err != nil {
			t.Fatalf("seed %d: apply: %v", seed, err)
		}
		counts["→applied"] += len(res.Applied)
		after := f.emu.Cells(id, tc.Name)
		checkKeysOnOwnRows(t, fmt.Sprintf("seed %d", seed), tc, after)
		// And every fixture key is still on its own row.
		for _, x := range identities(t, tc, after) {
			if want, ok := ref.rows[x.id]; ok && want["key"] != "" && want["payload"] != x.content["payload"] {
				t.Errorf("seed %d: key %q is on the row of %s", seed, x.id, x.content["payload"])
			}
		}
	}
	t.Logf("operations and outcomes: %v", counts)
	if counts["→applied"] == 0 {
		t.Error("nothing applied")
	}
}

// setLockedHook installs hook on f's emulator, run for one request at a time, so the state
// the other editor keeps between requests needs no lock of its own.
func setLockedHook(f *fixture, hook func(r emulator.Request)) {
	var mu sync.Mutex
	f.emu.SetHook(func(r emulator.Request) {
		mu.Lock()
		defer mu.Unlock()
		hook(r)
	})
}
