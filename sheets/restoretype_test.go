package sheets_test

import (
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// A cell put back keeps its type: a worker's claimedAt written as a date serial (a number)
// that triage's write hit on the wrong row comes back as that number, not as its text (which
// the sheet would no longer sort or format as a date).
func TestRestoreKeepsANumberANumber(t *testing.T) {
	rows := [][]any{
		{"id", "type", "status", "claimedBy", "claimedAt", "updatedAt"},
		{"j1", "send", "claimed", "w1", 40000.0, ""},  // stale: requeued
		{"j2", "send", "claimed", "w2", 46357.25, ""}, // a live claim, as a serial date
	}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "typed", Title: "typed", Sheets: []*emulator.Sheet{{Title: "Jobs", Rows: rows}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{queueTab("Jobs")}})
	wb := f.load(t, s)
	tab := wb.Tabs[0]
	ed, ok := model.Requeue(tab, &tab.Records[tab.Index("j1")], time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if !ok {
		t.Fatal("j1 is not stale")
	}
	var once sync.Once
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method == mBatchUpdate {
			// j2 moves to where j1 was, just before the write.
			once.Do(func() { must(t, f.emu.SortRows("typed", "Jobs", 0, true)) })
		}
	})
	res, err := s.Apply(ctx(t), []model.Edit{ed})
	f.emu.SetHook(nil)
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("%v %s", err, res.Summary())
	}
	cells := f.emu.Cells("typed", "Jobs")
	for _, r := range cells[1:] {
		switch r[0] {
		case "j2":
			if v, ok := r[4].(float64); !ok || v != 46357.25 || r[2] != "claimed" || r[3] != "w2" {
				t.Errorf("j2 = %#v, want its claim back with claimedAt the number 46357.25", r)
			}
		case "j1":
			if r[2] != "pending" || len(r) > 4 && r[4] != nil {
				t.Errorf("j1 = %#v, want requeued", r)
			}
		}
	}
	if n := f.emu.Count(mBatchUpdate); n < 2 {
		t.Errorf("%d writes: the write was not repaired (did it hit j2?)", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
