package sheets_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

func rowText(row []any) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = model.CellString(v)
	}
	return out
}

// EnsureSchema creates missing tabs and header cells, never deletes or moves anything, and
// does nothing the second time.
func TestEnsureSchema(t *testing.T) {
	wide := []any{"id", "status"}
	for i := len(wide); i < 24; i++ {
		wide = append(wide, fmt.Sprintf("extra %d", i))
	}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "init", Title: "init", Sheets: []*emulator.Sheet{
		{Title: "Notes", Rows: [][]any{{"keep me"}}},
		{Title: "Inbox", Rows: [][]any{{"Name", "State", "Custom"}, {"Ann", "new", "x"}}},
		{Title: "Wide Jobs", Rows: [][]any{wide, {"j1", "pending"}}},
	}})
	inbox := inboxTab("", "new")
	inbox.Columns = map[model.Field]string{model.FID: "Submission ID"}
	tabs := []model.TabConfig{inbox, deadTab("failed calls"), queueTab("Wide Jobs")}
	s := f.store(sheets.Options{Tabs: tabs})

	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.CreatedTabs, []string{"failed calls"}) {
		t.Errorf("created %q", rep.CreatedTabs)
	}
	wantInbox := []string{"Timestamp", "Email", "Message", "Submission ID"}
	if got := rep.AddedHeaders["Inbox"]; !reflect.DeepEqual(got, wantInbox) {
		t.Errorf("inbox headers added %q, want %q", got, wantInbox)
	}
	wantDL := []string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}
	if got := rep.AddedHeaders["failed calls"]; !reflect.DeepEqual(got, wantDL) {
		t.Errorf("dead-letter headers %q, want %q", got, wantDL)
	}
	wantWide := []string{"type", "payload", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"}
	if got := rep.AddedHeaders["Wide Jobs"]; !reflect.DeepEqual(got, wantWide) {
		t.Errorf("wide headers %q, want %q", got, wantWide)
	}
	if !strings.Contains(rep.String(), `created tab "failed calls"`) {
		t.Errorf("report text: %s", rep)
	}

	inboxCells := f.emu.Cells(f.id, "Inbox")
	if got := rowText(inboxCells[0]); !reflect.DeepEqual(got, []string{"Name", "State", "Custom", "Timestamp", "Email", "Message", "Submission ID"}) {
		t.Errorf("inbox header row = %q", got)
	}
	if got := rowText(inboxCells[1]); !reflect.DeepEqual(got, []string{"Ann", "new", "x"}) {
		t.Errorf("inbox data row changed: %q", got)
	}
	if got := rowText(f.emu.Cells(f.id, "failed calls")[0]); !reflect.DeepEqual(got, wantDL) {
		t.Errorf("new tab header = %q", got)
	}
	wideRow := rowText(f.emu.Cells(f.id, "Wide Jobs")[0])
	if len(wideRow) != 31 || wideRow[24] != "type" || wideRow[30] != "attempts" || wideRow[23] != "extra 23" {
		t.Errorf("wide header row = %q (grown past 26 columns)", wideRow)
	}
	wbk := f.emu.Workbook(f.id)
	var titles []string
	for _, sh := range wbk.Sheets {
		titles = append(titles, sh.Title)
	}
	if !reflect.DeepEqual(titles, []string{"Notes", "Inbox", "Wide Jobs", "failed calls"}) {
		t.Errorf("tabs = %q (none deleted, moved or renamed)", titles)
	}
	if got := rowText(f.emu.Cells(f.id, "Notes")[0]); got[0] != "keep me" {
		t.Errorf("unconfigured tab touched")
	}

	wb, err := s.Load(ctx(t))
	if err != nil || len(wb.Missing) != 0 || len(wb.Broken) != 0 || len(wb.Tabs) != 3 {
		t.Fatalf("load after init: %v missing %v broken %v", err, wb.Missing, wb.Broken)
	}

	f.reset()
	rep, err = s.EnsureSchema(ctx(t))
	if err != nil || rep.Changed() {
		t.Fatalf("second init: %v %+v", err, rep)
	}
	if n := f.emu.Count(mBatchUpdate) + f.emu.Count(mValuesBatchUpdate); n != 0 {
		t.Errorf("second init wrote %d times", n)
	}
	if !strings.Contains(rep.String(), "nothing to do") {
		t.Errorf("report text %q", rep)
	}
}

// Audit columns are never created by init.
func TestEnsureSchemaNoAuditColumns(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "na", Title: "na", Sheets: []*emulator.Sheet{{Title: "Sheet1"}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), queueTab("")}})
	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.CreatedTabs, []string{"Inbox", "Jobs"}) {
		t.Errorf("created %q", rep.CreatedTabs)
	}
	for tab, hs := range rep.AddedHeaders {
		for _, h := range hs {
			if strings.HasPrefix(strings.ToLower(h), "triaged") {
				t.Errorf("%s: init added audit column %q", tab, h)
			}
		}
	}
	if got := rowText(f.emu.Cells(f.id, "Inbox")[0]); !reflect.DeepEqual(got, []string{"Timestamp", "Name", "Email", "Message", "Status", "ID"}) {
		t.Errorf("inbox header = %q", got)
	}
}

// A write that was applied although the client saw a 503 is not sent again: resending would
// insert the header columns a second time. init looks first, finds them, and is done.
func TestEnsureSchemaRetryAfterAppliedFailure(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "rt", Title: "rt", Sheets: []*emulator.Sheet{
		{Title: "Sheet1"},
		{Title: "failed_calls", Rows: [][]any{{"source", "url", "payload"}, {"crm", "https://x/y", "{}"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), deadTab("")}})
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: true})
	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	if f.emu.Count(mBatchUpdate) != 1 || !reflect.DeepEqual(rep.CreatedTabs, []string{"Inbox"}) {
		t.Errorf("batchUpdates %d (the applied write must not be resent), report %+v", f.emu.Count(mBatchUpdate), rep)
	}
	if got := rowText(f.emu.Cells(f.id, "Inbox")[0]); len(got) != 6 {
		t.Errorf("inbox headers = %q", got)
	}
	want := []string{"source", "url", "payload", "timestamp", "error", "attempts", "method", "key", "status", "replayed_at"}
	if got := rowText(f.emu.Cells(f.id, "failed_calls")[0]); !reflect.DeepEqual(got, want) {
		t.Errorf("dead-letter headers = %q, want %q (once each)", got, want)
	}
}

// Invariant 13: an operator's unlabeled notes column (empty header cell, data below) is
// never adopted. Before, init wrote "timestamp, error, ..." from the first empty header
// cell, so the notes became the error column (blanked by the next replay's write-back) or,
// under `key`, idempotency keys.
func TestEnsureSchemaNeverAdoptsUnlabeledDataColumn(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "nb", Title: "nb", Sheets: []*emulator.Sheet{
		{Title: "failed_calls", Rows: [][]any{
			{"source", "url", "payload"},
			{"crm", "https://x/a", `{"id":"k1"}`, "call Ann first"},
			{"crm", "https://x/b", `{"id":"k2"}`},
			{"crm", "https://x/c", `{"id":"k3"}`, "ticket 42"},
		}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	cells := f.emu.Cells(f.id, "failed_calls")
	header := rowText(cells[0])
	if len(header) < 4 || header[3] != "" {
		t.Fatalf("the notes column D got a header: %q", header)
	}
	if got := rowText(cells[1]); len(got) != 4 || got[3] != "call Ann first" {
		t.Errorf("row 2 = %q, its note must stay in D", got)
	}
	if got := rowText(cells[3]); len(got) != 4 || got[3] != "ticket 42" {
		t.Errorf("row 4 = %q, its note must stay in D", got)
	}
	wantHeader := []string{"source", "url", "payload", "", "timestamp", "error", "attempts", "method", "key", "status", "replayed_at"}
	if !reflect.DeepEqual(header, wantHeader) {
		t.Errorf("header row = %q, want %q", header, wantHeader)
	}
	if !reflect.DeepEqual(rep.Unlabeled["failed_calls"], []string{"D"}) || rep.AddedAt["failed_calls"] != "E" {
		t.Errorf("report %+v: want column D reported unlabeled, headers from E", rep)
	}
	if txt := rep.String(); !strings.Contains(txt, "column D holds data but has no header") || !strings.Contains(txt, "from E") {
		t.Errorf("report text doesn't tell the operator about column D:\n%s", txt)
	}

	// What the next replay would use: the key and error columns are the new ones, not D.
	wb, err := s.Load(ctx(t))
	if err != nil || len(wb.Tabs) != 1 {
		t.Fatalf("load: %v %+v", err, wb)
	}
	tb := wb.Tabs[0]
	for _, fld := range []model.Field{model.FError, model.FKey, model.FTimestamp} {
		if tb.Header.Col(fld) == 3 {
			t.Errorf("%s is mapped to the notes column D", fld)
		}
	}
	if c := tb.Header.Col(model.FKey); c != 8 {
		t.Errorf("key column = %d, want 8 (I)", c)
	}

	// Run again: nothing to add, and column D is still reported.
	f.reset()
	rep, err = s.EnsureSchema(ctx(t))
	if err != nil || rep.Changed() || f.emu.Count(mBatchUpdate) != 0 {
		t.Fatalf("second init: %v %+v, %d writes", err, rep, f.emu.Count(mBatchUpdate))
	}
	if !reflect.DeepEqual(rep.Unlabeled["failed_calls"], []string{"D"}) || !strings.Contains(rep.String(), "nothing to do") {
		t.Errorf("second report: %+v\n%s", rep, rep)
	}
}

// An unlabeled data column between labeled ones, and one far right with data in a single row
// below an empty stretch: neither is adopted, and the headers go after the last used column.
func TestEnsureSchemaUnlabeledColumnInTheMiddle(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "mid", Title: "mid", Sheets: []*emulator.Sheet{
		{Title: "Jobs", Rows: [][]any{
			{"id", "", "status"},
			{"j1", "keep B2", "pending"},
			{"j2", nil, "done"},
			{},
			{"j3", nil, "pending", nil, nil, nil, "far G5"},
		}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{queueTab("")}})
	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	cells := f.emu.Cells(f.id, "Jobs")
	header := rowText(cells[0])
	want := []string{"id", "", "status", "", "", "", "", "type", "payload", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"}
	if !reflect.DeepEqual(header, want) {
		t.Errorf("header = %q, want %q", header, want)
	}
	if got := rowText(cells[1]); got[1] != "keep B2" {
		t.Errorf("B2 = %q", got[1])
	}
	if got := rowText(cells[4]); len(got) != 7 || got[6] != "far G5" {
		t.Errorf("row 5 = %q, G5 must keep its value", got)
	}
	if !reflect.DeepEqual(rep.Unlabeled["Jobs"], []string{"B", "G"}) || rep.AddedAt["Jobs"] != "H" {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(rep.String(), "columns B, G hold data but have no header") {
		t.Errorf("report text:\n%s", rep)
	}
}

// A grid with no empty column left: the headers go into new columns, and every used column
// keeps its header and data.
func TestEnsureSchemaFullGrid(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "full", Title: "full", Sheets: []*emulator.Sheet{
		{Title: "Inbox", ColumnCount: 4, Rows: [][]any{
			{"Name", "Status", "ID", ""},
			{"Ann", "new", "m1", "note in D"},
		}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	cells := f.emu.Cells(f.id, "Inbox")
	if got := rowText(cells[0]); !reflect.DeepEqual(got, []string{"Name", "Status", "ID", "", "Timestamp", "Email", "Message"}) {
		t.Errorf("header = %q", got)
	}
	if got := rowText(cells[1]); !reflect.DeepEqual(got, []string{"Ann", "new", "m1", "note in D"}) {
		t.Errorf("data row = %q", got)
	}
	if !reflect.DeepEqual(rep.Unlabeled["Inbox"], []string{"D"}) {
		t.Errorf("report %+v", rep)
	}
	wb := f.emu.Workbook(f.id)
	if cols := wb.Sheets[0].ColumnCount; cols != 7 {
		t.Errorf("grid has %d columns, want 7 (4 + 3 new)", cols)
	}
}

// Another editor types into the columns init found empty, in the instant between init's read
// and its write: that data is not overwritten (init writes only into the columns its own
// atomic request inserts).
func TestEnsureSchemaWriteNeverLandsOnDataTypedMeanwhile(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "race", Title: "race", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: [][]any{{"Name", "Status", "ID"}, {"Ann", "new", "m1"}}},
	}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != mBatchUpdate && r.Method != mValuesBatchUpdate {
			return // type in the instant before init's first write, whichever request it is
		}
		f.emu.SetHook(nil)
		for _, c := range []struct {
			row, col int
			v        string
		}{{1, 3, "Owner"}, {2, 3, "bob"}, {1, 4, ""}, {2, 5, "late note"}} {
			if c.v != "" {
				if err := f.emu.SetCell(f.id, "Inbox", c.row, c.col, c.v); err != nil {
					t.Error(err)
				}
			}
		}
	})
	if _, err := s.EnsureSchema(ctx(t)); err != nil {
		t.Fatal(err)
	}
	cells := f.emu.Cells(f.id, "Inbox")
	header, row := rowText(cells[0]), rowText(cells[1])
	if !reflect.DeepEqual(header[:6], []string{"Name", "Status", "ID", "Timestamp", "Email", "Message"}) {
		t.Errorf("header = %q", header)
	}
	if got := strings.Join(header, "|"); !strings.Contains(got, "Owner") {
		t.Errorf("the header typed meanwhile was overwritten: %q", header)
	}
	if got := strings.Join(row, "|"); !strings.Contains(got, "bob") || !strings.Contains(got, "late note") {
		t.Errorf("data typed meanwhile was overwritten: %q", row)
	}
}
