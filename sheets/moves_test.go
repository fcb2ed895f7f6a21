package sheets_test

import (
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
			mu     sync.Mutex
			ops    []string
			writes int
		)
		f.emu.SetHook(func(r emulator.Request) {
			mu.Lock()
			defer mu.Unlock()
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
