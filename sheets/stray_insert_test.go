package sheets_test

import (
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Invariant 1 for the wrong row a read can't describe: a row that someone inserted between
// the locate read and the write, holding a value in a column triage writes.
//
// Inbox m1 (new), m2 (new); set-status m2 → done. Just before the write another editor
// inserts a row x9 with status "spam" where m2 was (row 3). The write lands on x9 and
// overwrites "spam" with "done". What x9 held is in no read of this Apply, but the write
// copied the row into its journal entry in the same atomic request: the journal shows the
// write hit x9, not m2, and what x9 held, so "spam" is put back exactly and the edit is
// written again on m2 (row 4).
func TestApplyOverwriteOfRowInsertedBeforeWrite(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "ins", Title: "ins", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(2)}}})
	tc := inboxTab("Inbox", "new", "read", "replied", "done", "spam")
	s := f.store(sheets.Options{Tabs: []model.TabConfig{tc}})
	wb := f.load(t, s)
	tab := wb.Tabs[0]
	rec := &tab.Records[tab.Index("m2")]
	var once sync.Once
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != mBatchUpdate {
			return
		}
		once.Do(func() {
			if err := f.emu.InsertRows("ins", "Inbox", 3, [][]any{{45000.9, "Xena", "x@example.com", "hi", "spam", "x9"}}); err != nil {
				t.Error(err)
			}
		})
	})
	res, err := s.Apply(ctx(t), []model.Edit{model.SetStatus(tab, rec, "done")})
	f.emu.SetHook(nil)
	rows := f.emu.Cells("ins", "Inbox")
	status := map[string]string{}
	for _, r := range rows[1:] {
		status[model.CellString(r[5])] = model.CellString(r[4])
	}
	t.Logf("sheet after: %v; result applied %d conflicts %v missing %d; err %v", rows, len(res.Applied), res.Conflicts, len(res.Missing), err)
	if err != nil {
		t.Fatal(err)
	}
	if status["m2"] != "done" || len(res.Applied) != 1 {
		t.Errorf("m2 status %q, result %s", status["m2"], res.Summary())
	}
	// What x9 held is in the write's journal entry, copied in the same atomic request: it is
	// put back exactly, and nothing is damaged.
	if status["x9"] != "spam" {
		t.Errorf("x9 status %q, want its own %q put back", status["x9"], "spam")
	}
	if len(res.Damaged) != 0 || !res.OK() {
		t.Errorf("damage reported: %+v (OK %v)", res.Damaged, res.OK())
	}
}
