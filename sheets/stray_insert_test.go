package sheets_test

import (
	"strings"
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

// An insert above the rows before every write: every round of every write lands one row off,
// and no restore can settle. The call ends after its write rounds and the restore rounds that
// put nothing back (sheets.MaxStuckRounds of them), not after every restore round, each
// pause at most sheets.MaxRestorePause; its edits are undecided conflicts, and every value of
// ours still on another row is reported as damage, naming its column and value.
func TestApplyUnderAnInsertBeforeEveryWriteEndsWhenNothingSettles(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "storm", Title: "storm", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(40)}}})
	tc := inboxTab("Inbox", "new", "read", "replied", "done", "spam")
	s := f.store(sheets.Options{Tabs: []model.TabConfig{tc}})
	wb := f.load(t, s)
	tab := wb.Tabs[0]
	var edits []model.Edit
	for _, id := range []string{"m3", "m10", "m25"} {
		edits = append(edits, model.SetStatus(tab, &tab.Records[tab.Index(id)], "done"))
	}
	writes := 0
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != mBatchUpdate {
			return
		}
		writes++
		if err := f.emu.InsertRows("storm", "Inbox", 2, [][]any{{}}); err != nil {
			t.Error(err)
		}
	})
	res, err := s.Apply(ctx(t), edits)
	f.emu.SetHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes; %d conflicts, %d damaged; waits %v", writes, len(res.Conflicts), len(res.Damaged), f.sleep.Waits())
	// Its rounds (the damage sheet's write is one more) end early: none of the restore rounds
	// settles anything.
	if most := min(sheets.MaxWriteRounds+1+sheets.MaxStuckRounds+1, sheets.MaxWriteRounds+sheets.MaxRestoreRounds); writes > most {
		t.Errorf("%d writes, want at most %d: the restore rounds went on though none put anything back", writes, most)
	}
	if len(res.Conflicts) != len(edits) {
		t.Errorf("conflicts %v, want every edit undecided", res.Conflicts)
	}
	for _, c := range res.Conflicts {
		if !c.Undecided {
			t.Errorf("conflict %s is not marked undecided", c)
		}
	}
	for _, w := range f.sleep.Waits() {
		if w > sheets.MaxRestorePause {
			t.Errorf("a pause of %v between restore rounds, want at most %v", w, sheets.MaxRestorePause)
		}
	}
	// Every value of ours left on a row it was not meant for is named.
	named := 0
	for _, d := range res.Damaged {
		if d.Ours == "done" && strings.Contains(strings.ToLower(d.Column), "status") {
			named++
		}
	}
	left := 0
	for _, row := range f.emu.Cells("storm", "Inbox")[1:] {
		if len(row) > 4 && model.CellString(row[4]) == "done" {
			left++
		}
	}
	if left == 0 || left != named {
		t.Errorf("%d rows read done, %d damages name a done: %+v", left, named, res.Damaged)
	}
}
