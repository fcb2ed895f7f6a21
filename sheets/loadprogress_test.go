package sheets_test

import (
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// A load tells whoever asked (model.WithLoadProgress) how far it is, tab by tab, as the rows
// arrive: the grid's row count is the total, the last report the rows the tab has.
func TestLoadReportsProgressByTab(t *testing.T) {
	const n = 10_000
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "lp", Title: "lp", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(n), RowCount: n + 500},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	type report struct{ rows, total int }
	var got []report
	c := model.WithLoadProgress(ctx(t), func(tab string, rows, total int) {
		if tab != "Inbox" {
			t.Errorf("progress of tab %q, want Inbox", tab)
		}
		got = append(got, report{rows, total})
	})
	if _, err := s.Load(c); err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 {
		t.Fatalf("%d progress reports for %d rows, want one every few thousand and the last: %v", len(got), n+1, got)
	}
	for i, r := range got {
		if r.total != n+500 {
			t.Errorf("report %d: total %d, want the grid's %d rows", i, r.total, n+500)
		}
		if i > 0 && r.rows < got[i-1].rows {
			t.Errorf("report %d: %d rows after %d", i, r.rows, got[i-1].rows)
		}
	}
	if last := got[len(got)-1]; last.rows != n+1 { // the header and n rows
		t.Errorf("last report %d rows, want %d", last.rows, n+1)
	}
	// A load nobody asked about reports nothing and still loads.
	if _, err := s.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// Without the store's own HTTP client the read is the sheets/v4 client's, decoded whole: the
// progress is each tab's end.
func TestLoadReportsProgressWithTheClientsDecode(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "lp2", Title: "lp2", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(30)},
	}})
	s := sheets.New(ctx(t), f.svc, sheets.Options{SpreadsheetID: "lp2", Tabs: []model.TabConfig{inboxTab("", "new")}})
	var last int
	c := model.WithLoadProgress(ctx(t), func(tab string, rows, total int) { last = rows })
	if _, err := s.Load(c); err != nil {
		t.Fatal(err)
	}
	if last != 31 {
		t.Errorf("last report %d rows, want 31 (the header and 30 rows)", last)
	}
}
