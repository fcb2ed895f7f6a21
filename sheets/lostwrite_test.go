package sheets_test

import (
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

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
			mu     sync.Mutex
			ops    []string
			writes int
		)
		f.emu.SetHook(func(r emulator.Request) {
			mu.Lock()
			defer mu.Unlock()
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
		var (
			mu     sync.Mutex
			writes int
		)
		f.emu.SetHook(func(r emulator.Request) {
			mu.Lock()
			defer mu.Unlock()
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
