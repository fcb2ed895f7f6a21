package sheets_test

import (
	"strconv"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// BenchmarkLoad100k loads and decodes a 100,000-row inbox through the emulator (real HTTP,
// real client) and reports the requests each load sends.
func BenchmarkLoad100k(b *testing.B) {
	f := newFixture(b, &emulator.Workbook{SpreadsheetID: "load100k", Title: "load100k", Sheets: []*emulator.Sheet{
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

// The write path's cost, journal included, against the same writes sent blind. Every one of
// these locates its rows by ID in a 10,000-row inbox through the emulator (real HTTP, the
// real sheets/v4 client, httptest), when nothing moves between the read and the write, and
// reports the requests each write sends (requests/op); time and allocations count both ends
// (the emulator runs in the benchmark's process). Each op flips the status of the same rows
// (new → done, then done → new), so every op writes every cell.
//
//	go test -run '^$' -bench 'Apply|Blind' -benchmem -count=6 ./sheets/

// applyBenchRows is the inbox the write benchmarks write into.
const applyBenchRows = 10_000

// applyBenchIDs are the IDs of n edits: spread over the tab (every 10th row from m1) for
// 1,000, the middle row for 1 (the TUI's common case: one status change).
func applyBenchIDs(n int) []string {
	if n == 1 {
		return []string{"m" + itoa(applyBenchRows/2+1)}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "m" + itoa(1+i*applyBenchRows/n)
	}
	return ids
}

// applyBenchFixture is a fresh emulator holding the 10,000-row inbox.
func applyBenchFixture(b *testing.B, name string) *fixture {
	return newFixture(b, &emulator.Workbook{SpreadsheetID: name, Title: name, Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: inboxRows(applyBenchRows)},
	}})
}

// reportWriteRequests reports requests/op and fails unless every op sent exactly two
// requests (one values.batchGet, one spreadsheets.batchUpdate).
func reportWriteRequests(b *testing.B, f *fixture, ops int) {
	b.Helper()
	counts := f.emu.Counts()
	if counts[mBatchGet] != ops || counts[mBatchUpdate] != ops || f.total() != 2*ops {
		b.Errorf("%d ops sent %v, want one %s and one %s each", ops, counts, mBatchGet, mBatchUpdate)
	}
	b.ReportMetric(float64(f.total())/float64(ops), "requests/op")
}

// checkFlipped fails unless every written row's status is the one the last op set.
func checkFlipped(b *testing.B, f *fixture, ids []string, ops int) {
	b.Helper()
	want := [2]string{"done", "new"}[(ops+1)%2]
	rows := f.emu.Cells(f.id, "Inbox")
	for _, id := range ids {
		r, _ := strconv.Atoi(id[1:]) // m<n> is row n+1: 0-based row n
		if got := cellAt(rows, r, 4); got != want {
			b.Fatalf("after %d ops %s holds %q, want %q", ops, id, got, want)
		}
	}
}

// benchApply is Store.Apply of n status changes per op: one values.batchGet to locate and
// check the rows, one spreadsheets.batchUpdate that adds the journal entry, copies the header
// and every target row into it, writes the cells, deletes the previous op's entry, and
// answers with the entry (see apply.go).
func benchApply(b *testing.B, n int) {
	f := applyBenchFixture(b, "apply"+itoa(n))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}})
	if _, err := s.Load(ctx(b)); err != nil { // as every caller does first: it caches the sheetIds
		b.Fatal(err)
	}
	ids := applyBenchIDs(n)
	var edits [2][]model.Edit // new → done, done → new
	for i, flip := range [2][2]string{{"new", "done"}, {"done", "new"}} {
		for _, id := range ids {
			edits[i] = append(edits[i], setStatus("Inbox", id, flip[0], flip[1]))
		}
	}
	f.reset()
	ops := 0
	for b.Loop() {
		res, err := s.Apply(ctx(b), edits[ops%2])
		if err != nil || len(res.Applied) != n || !res.OK() {
			b.Fatalf("%v %s", err, res.Summary())
		}
		ops++
	}
	reportWriteRequests(b, f, ops)
	checkFlipped(b, f, ids, ops)
}

// BenchmarkApply1000 writes 1,000 status changes (located by ID in a 10,000-row inbox) per
// op and reports the requests each Apply sends.
func BenchmarkApply1000(b *testing.B) { benchApply(b, 1000) }

// BenchmarkApply1 writes one status change per op, as the TUI does for one keypress.
func BenchmarkApply1(b *testing.B) { benchApply(b, 1) }

// benchBlind is the baseline of benchApply: the same n cell writes with no safety at all,
// built directly with the sheets/v4 client. One values.batchGet of the tab (the store's
// render options), the rows located by ID as read, then one spreadsheets.batchUpdate of
// one updateCells per cell (as the store writes them) at those rows: no Expect check, no
// journal entry, no read-back (the answer is cut to the spreadsheetId). A row moved between
// the read and the write would get the value meant for another; this is what a write would
// cost without the journal.
func benchBlind(b *testing.B, n int) {
	f := applyBenchFixture(b, "blind"+itoa(n))
	meta, err := f.svc.Spreadsheets.Get(f.id).Fields("sheets.properties(sheetId,title)").Context(ctx(b)).Do()
	if err != nil { // as the store's Load does once: the sheetId updateCells addresses
		b.Fatal(err)
	}
	sheetID := int64(-1)
	for _, sh := range meta.Sheets {
		if sh.Properties.Title == "Inbox" {
			sheetID = sh.Properties.SheetId
		}
	}
	ids := applyBenchIDs(n)
	f.reset()
	ops := 0
	for b.Loop() {
		value := [2]string{"done", "new"}[ops%2]
		vr, err := f.svc.Spreadsheets.Values.BatchGet(f.id).Ranges("Inbox").
			ValueRenderOption("UNFORMATTED_VALUE").DateTimeRenderOption("SERIAL_NUMBER").Context(ctx(b)).Do()
		if err != nil {
			b.Fatal(err)
		}
		rows := vr.ValueRanges[0].Values
		idCol, statusCol := -1, -1
		for c, h := range rows[0] {
			switch model.CellString(h) {
			case "ID":
				idCol = c
			case "Status":
				statusCol = c
			}
		}
		wanted := make(map[string]int, n) // ID → 0-based row, -1 until found
		for _, id := range ids {
			wanted[id] = -1
		}
		for r := 1; r < len(rows); r++ {
			if idCol < len(rows[r]) {
				if id := model.CellString(rows[r][idCol]); wanted[id] == -1 {
					wanted[id] = r
				}
			}
		}
		reqs := make([]*sheetsapi.Request, 0, n)
		for _, id := range ids {
			r := wanted[id]
			if r < 0 {
				b.Fatalf("%s not found", id)
			}
			reqs = append(reqs, &sheetsapi.Request{UpdateCells: &sheetsapi.UpdateCellsRequest{
				Start:  &sheetsapi.GridCoordinate{SheetId: sheetID, RowIndex: int64(r), ColumnIndex: int64(statusCol)},
				Rows:   []*sheetsapi.RowData{{Values: []*sheetsapi.CellData{{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &value}}}}},
				Fields: "userEnteredValue",
			}})
		}
		if _, err := f.svc.Spreadsheets.BatchUpdate(f.id, &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: reqs}).
			Fields("spreadsheetId").Context(ctx(b)).Do(); err != nil {
			b.Fatal(err)
		}
		ops++
	}
	reportWriteRequests(b, f, ops)
	checkFlipped(b, f, ids, ops)
}

// BenchmarkBlind1000 is BenchmarkApply1000's writes sent blind (see benchBlind).
func BenchmarkBlind1000(b *testing.B) { benchBlind(b, 1000) }

// BenchmarkBlind1 is BenchmarkApply1's write sent blind (see benchBlind).
func BenchmarkBlind1(b *testing.B) { benchBlind(b, 1) }
