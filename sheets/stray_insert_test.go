package sheets_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/sheetstest"
)

// Invariant 1 (c) and the README's promise ("puts that row's cell back as it was"), for the
// one kind of wrong row the write's answer can't describe: a row that someone inserted
// between the locate read and the write, holding a value in a column triage writes.
//
// The smallest case: Inbox m1 (new), m2 (new); set-status m2 → done. Just before the write
// another editor inserts a row x9 with status "spam" where m2 was (row 3). The write lands on
// x9 and overwrites "spam" with "done"; the read-back sees x9 is not m2, and the edit is
// written again on m2 (row 4). What x9 held is in no read of this Apply, so it can't be
// restored from one. The store then must either put "spam" back (it would need what the row
// held right before the write, e.g. copied in the same atomic batchUpdate) or say that it
// overwrote a value it cannot restore, naming the row and column: it does the latter
// (ApplyResult.Damaged), never blanking the cell and reporting success.
func TestApplyOverwriteOfRowInsertedBeforeWrite(t *testing.T) {
	f := newFixture(t, &sheetstest.Workbook{SpreadsheetID: "ins", Title: "ins", Sheets: []*sheetstest.Sheet{{Title: "Inbox", Rows: inboxRows(2)}}})
	tc := inboxTab("Inbox", "new", "read", "replied", "done", "spam")
	s := f.store(sheets.Options{Tabs: []model.TabConfig{tc}})
	wb, err := s.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tabs[0]
	rec := &tab.Records[tab.Index("m2")]
	var once sync.Once
	f.emu.SetHook(func(r sheetstest.Request) {
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
	// What x9 held is in no read of this Apply: its cell is cleared (never left holding our
	// value) and the result says so, naming the row and column, and is not OK.
	if status["x9"] != "" {
		t.Errorf("x9 status %q, want our value removed", status["x9"])
	}
	if len(res.Damaged) != 1 || res.Damaged[0].ID != "x9" || res.Damaged[0].Column != `"Status"` || res.Damaged[0].Ours != "done" || res.OK() {
		t.Errorf("damage not reported: %+v (OK %v)", res.Damaged, res.OK())
	}
	if !strings.Contains(res.Summary(), "x9") {
		t.Errorf("summary %q doesn't name the row", res.Summary())
	}
}
