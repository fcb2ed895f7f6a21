package sheets_test

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// When rows never stop moving (a row inserted at the top before every write, so every write
// lands one row off), the rounds end with values of ours that could not be put back. They are
// reported (ApplyResult.Damaged) and left in a visible sheet for the next run of any triage:
// until someone deletes it, no key cell of that tab is written or checked, so no replay can
// send from it; other writes go on. Deleting the sheet clears the tab.
func TestDamageBlocksKeysUntilFixed(t *testing.T) {
	rows := [][]any{{"timestamp", "source", "url", "payload", "key", "status"}}
	for i := range 6 {
		rows = append(rows, []any{45000.0 + float64(i), "crm", "https://x.example/h", `{"n":` + itoa(i) + `}`, "", "dead"})
	}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "dm", Title: "dm", Sheets: []*emulator.Sheet{{Title: "failed_calls", Rows: rows}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	wb := f.load(t, s)
	tab := wb.Tab(model.RoleDeadLetter)
	var edits []model.Edit
	for i := range tab.Records {
		r := &tab.Records[i]
		edits = append(edits, model.Edit{Tab: "failed_calls", ID: r.ID, Expect: map[model.Field]string{model.FKey: ""}, Set: map[model.Field]string{model.FKey: r.ID}})
	}
	n := 0
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method == mBatchUpdate && !strings.Contains(r.RawQuery, "fields=spreadsheetId") {
			n++
			mustDo(t, f.emu.InsertRows(f.id, "failed_calls", 2, [][]any{{45100.0 + float64(n), "crm", "https://x.example/h", `{"storm":` + itoa(n) + `}`, "", "dead"}}))
		}
	})
	res, err := s.Apply(ctx(t), edits)
	f.emu.SetHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Damaged) == 0 || res.OK() || len(res.Applied) != 0 {
		t.Fatalf("result %s, want every edit a conflict and damage reported", res.Summary())
	}
	var damage string
	for _, sh := range f.emu.Workbook(f.id).Sheets {
		if strings.HasPrefix(sh.Title, "triage: check failed_calls ") {
			damage = sh.Title
		}
	}
	if damage == "" {
		t.Fatal("no damage sheet")
	}
	listed := f.emu.Cells(f.id, damage)
	if len(listed) != 2+len(res.Damaged) || cellAt(listed, 2, 3) != res.Damaged[0].Ours || cellAt(listed, 2, 4) != res.Damaged[0].Before {
		t.Errorf("damage sheet %v, want the %d cells", listed, len(res.Damaged))
	}
	// The next run of another store: a key write is refused, nothing sent; a status change goes on.
	s2 := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	wb, err = s2.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	tab = wb.Tab(model.RoleDeadLetter)
	var r *model.Record
	for i := range tab.Records {
		if tab.Get(&tab.Records[i], model.FPayload) == `{"storm":1}` {
			r = &tab.Records[i] // a row the storm inserted: no write of ours meant it
		}
	}
	if r == nil || r.ID == "" {
		t.Fatalf("no storm row in %v", f.emu.Cells(f.id, "failed_calls"))
	}
	f.reset()
	_, err = s2.Apply(ctx(t), []model.Edit{{Tab: "failed_calls", ID: r.ID, Expect: map[model.Field]string{model.FKey: tab.Get(r, model.FKey)}, Set: map[model.Field]string{model.FKey: r.ID}}})
	if err == nil || !strings.Contains(err.Error(), damage) || f.emu.Count(mBatchUpdate) != 0 {
		t.Errorf("key write on a damaged tab: %v, %d writes; want refused, naming %q", err, f.emu.Count(mBatchUpdate), damage)
	}
	if res, err := s2.Apply(ctx(t), []model.Edit{model.SetStatus(tab, r, "discarded")}); err != nil || len(res.Applied) != 1 {
		t.Errorf("a status change on a damaged tab: %v %+v, want it written", err, res)
	}
	// Deleted by a person: the next load clears the tab.
	mustDo(t, f.emu.DeleteSheet(f.id, damage))
	if _, err := s2.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Apply(ctx(t), []model.Edit{{Tab: "failed_calls", ID: r.ID, Expect: map[model.Field]string{model.FKey: tab.Get(r, model.FKey)}, Set: map[model.Field]string{model.FKey: tab.Get(r, model.FKey)}}}); err != nil {
		t.Errorf("after the damage sheet was deleted: %v", err)
	}
}
