package sheets_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/sheetstest"
)

// Invariant 1 (c), within the bound: another editor sorts the tab before the first three
// writes of one Apply (the write of the edits, the write that puts our values back where the
// answer showed them, and the next write), then stops. The Apply has write rounds to spare
// (maxWriteRounds 4): it must converge, every edit applied, every key on its own row, and no
// error. The edits are the ones replay's check before sending makes (replay.checkRows): for a
// row without a key, a status check and the write of its minted key; for a row with a key,
// the key cell written back unchanged.
//
// What it guards against: the Apply ends with "rows kept moving while triage wrote, and it
// could not put back what it wrote on rows that were not the targets; fix by hand: ..."
// although the sheet is right, and reports no edit applied, so a replay refuses every row;
// worse, with more rows the message is true and keys of one row stay on another.
func TestApplyConvergesAfterThreeMovedWrites(t *testing.T) {
	// n0 and n3 have no key (their minted keys are written); n1 and n2 have one. Sort by
	// the key column: descending before writes 1 and 2, ascending before write 3.
	restoreRoundsCase(t, "restore-3", []string{"", "k1", "k2", ""}, []sortOp{{3, true}, {3, true}, {3, false}})
}

type sortOp struct {
	col  int
	desc bool
}

func restoreRoundsCase(t *testing.T, id string, keys []string, sorts []sortOp) {
	t.Helper()
	tc := deadTab("failed_calls")
	rows := [][]any{{"source", "url", "payload", "key", "status"}}
	for i, k := range keys {
		var key any
		if k != "" {
			key = k
		}
		rows = append(rows, []any{"crm", "https://x/h", fmt.Sprintf(`{"n":%d}`, i), key, "dead"})
	}
	f := newFixture(t, &sheetstest.Workbook{SpreadsheetID: id, Title: id, Sheets: []*sheetstest.Sheet{{Title: tc.Name, Rows: rows}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{tc}})
	wb, err := s.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tabs[0]
	var edits []model.Edit
	own := map[string]string{} // payload → its own key
	for i := range tab.Records {
		rec := &tab.Records[i]
		own[tab.Get(rec, model.FPayload)] = rec.ID
		if kc := tab.Get(rec, model.FKey); kc != "" {
			edits = append(edits, model.Edit{Tab: tc.Name, ID: rec.ID,
				Expect: map[model.Field]string{model.FStatus: "dead", model.FKey: kc}, Set: map[model.Field]string{model.FKey: kc}})
			continue
		}
		edits = append(edits,
			model.Edit{Tab: tc.Name, ID: rec.ID, Expect: map[model.Field]string{model.FStatus: "dead"}, Set: map[model.Field]string{model.FStatus: "dead"}},
			model.Edit{Tab: tc.Name, ID: rec.ID, Expect: map[model.Field]string{model.FStatus: "dead", model.FKey: ""}, Set: map[model.Field]string{model.FKey: rec.ID}})
	}
	var (
		mu     sync.Mutex
		writes int
		trace  []string
	)
	show := func() string {
		var b []string
		for _, r := range f.emu.Cells(id, tc.Name)[1:] {
			k := model.CellString(r[3])
			if strings.HasPrefix(k, "triage-") {
				k = "M" + k[7:11]
			}
			b = append(b, fmt.Sprintf("%s:%s", model.CellString(r[2]), k))
		}
		return strings.Join(b, " ")
	}
	f.emu.SetHook(func(r sheetstest.Request) {
		mu.Lock()
		defer mu.Unlock()
		trace = append(trace, fmt.Sprintf("%-25s sheet %s", r.Method, show()))
		if r.Method != mBatchUpdate {
			return
		}
		writes++
		if writes > len(sorts) {
			return
		}
		op := sorts[writes-1]
		if err := f.emu.SortRows(id, tc.Name, op.col, op.desc); err != nil {
			t.Error(err)
		}
		trace = append(trace, fmt.Sprintf("  sort by column %d desc=%v:  sheet %s", op.col, op.desc, show()))
	})
	res, err := s.Apply(ctx(t), edits)
	f.emu.SetHook(nil)
	trace = append(trace, "end:                      sheet "+show())
	bad := false
	if err != nil {
		bad = true
		t.Errorf("Apply: %v", err)
	} else if len(res.Applied) != len(edits) || !res.OK() {
		bad = true
		t.Errorf("result %s (applied %d of %d)", res.Summary(), len(res.Applied), len(edits))
	}
	for _, r := range f.emu.Cells(id, tc.Name)[1:] {
		if k, p := model.CellString(r[3]), model.CellString(r[2]); k != own[p] {
			bad = true
			t.Errorf("row of payload %s holds key %q, its own is %q", p, k, own[p])
		}
	}
	if bad {
		t.Logf("requests, and the sheet (payload:key) as each arrived:\n  %s", strings.Join(trace, "\n  "))
	}
}
