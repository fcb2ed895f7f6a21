package sheets_test

import (
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/sheetstest"
)

// BenchmarkLoad100k loads and decodes a 100,000-row inbox through the emulator (real HTTP,
// real client) and reports the requests each load sends.
func BenchmarkLoad100k(b *testing.B) {
	f := newFixture(b, &sheetstest.Workbook{SpreadsheetID: "load100k", Title: "load100k", Sheets: []*sheetstest.Sheet{
		{Title: "Inbox", Rows: inboxRows(100_000), Validations: map[string][]string{"E": {"new", "read", "done"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("")}})
	if _, err := s.Load(ctx(b)); err != nil { // the first load also reads the dropdown, once
		b.Fatal(err)
	}
	f.reset()
	loads := 0
	for b.Loop() {
		wb, err := s.Load(ctx(b))
		if err != nil {
			b.Fatal(err)
		}
		if n := len(wb.Tabs[0].Records); n != 100_000 {
			b.Fatalf("%d records", n)
		}
		loads++
	}
	b.ReportMetric(float64(f.total())/float64(loads), "requests/load")
}

// BenchmarkDecode100k is model.Decode alone on 100,000 rows.
func BenchmarkDecode100k(b *testing.B) {
	rows := inboxRows(100_000)
	tc := inboxTab("")
	for b.Loop() {
		t, err := model.Decode(tc, rows, nil)
		if err != nil || len(t.Records) != 100_000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply1000 writes 1,000 status changes (located by ID in a 10,000-row inbox) per
// op and reports the requests each Apply sends.
func BenchmarkApply1000(b *testing.B) {
	f := newFixture(b, &sheetstest.Workbook{SpreadsheetID: "apply1000", Title: "apply1000", Sheets: []*sheetstest.Sheet{
		{Title: "Inbox", Rows: inboxRows(10_000)},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}})
	if _, err := s.Load(ctx(b)); err != nil { // as every caller does first: it caches the sheetIds
		b.Fatal(err)
	}
	f.emu.ResetCounts()
	flip := [2]string{"new", "done"}
	ops := 0
	for b.Loop() {
		edits := make([]model.Edit, 1000)
		for i := range edits {
			edits[i] = setStatus("Inbox", "m"+itoa(1+i*10), flip[ops%2], flip[(ops+1)%2])
		}
		res, err := s.Apply(ctx(b), edits)
		if err != nil || len(res.Applied) != 1000 {
			b.Fatalf("%v %s", err, res.Summary())
		}
		ops++
	}
	b.ReportMetric(float64(f.total())/float64(ops), "requests/op")
}
