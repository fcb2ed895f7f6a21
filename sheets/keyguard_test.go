package sheets_test

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Invariant 3 at the store, whatever the caller expects: an edit that sets a key without
// expecting the key cell empty (a caller's bug, or a stale record) never overwrites a key
// cell that holds a value. It is a conflict naming the key there, and nothing is sent.
func TestApplyNeverOverwritesAKeyCell(t *testing.T) {
	rows := [][]any{{"timestamp", "source", "url", "payload", "key", "status"},
		{45000.0, "crm", "https://x.example/h", `{"n":1}`, "k-old", "dead"},
		{45001.0, "crm", "https://x.example/h", `{"n":2}`, "", "dead"}}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "kg", Title: "kg", Sheets: []*emulator.Sheet{{Title: "failed_calls", Rows: rows}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	loadThenReset(t, f, s)
	res, err := s.Apply(ctx(t), []model.Edit{{Tab: "failed_calls", ID: "k-old",
		Expect: map[model.Field]string{model.FStatus: "dead"}, Set: map[model.Field]string{model.FKey: "k-new", model.FStatus: "delivered"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Field != model.FKey || res.Conflicts[0].Now != "k-old" || !strings.Contains(res.Conflicts[0].Reason, "never changes") {
		t.Fatalf("result %+v, want a conflict on the key cell", res)
	}
	if got := cellAt(f.emu.Cells(f.id, "failed_calls"), 1, 4); got != "k-old" {
		t.Errorf("key cell %q, want k-old untouched", got)
	}
	if n := f.emu.Count(mBatchUpdate); n != 0 {
		t.Errorf("%d writes sent, want none", n)
	}
	// The same key again is no change: applied, nothing written.
	res, err = s.Apply(ctx(t), []model.Edit{{Tab: "failed_calls", ID: "k-old",
		Expect: map[model.Field]string{model.FStatus: "dead"}, Set: map[model.Field]string{model.FKey: "k-old"}}})
	if err != nil || len(res.Applied) != 1 || f.emu.Count(mBatchUpdate) != 0 {
		t.Errorf("same key: %v %+v, %d writes", err, res, f.emu.Count(mBatchUpdate))
	}
}
