package emulator

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
	sheets "google.golang.org/api/sheets/v4"
)

// journalID is the sheetId of the "journal" tab journalBook adds.
const journalID = 50

// journalBook is testWorkbook with an empty 10 x 8 "journal" tab.
func journalBook() *Workbook {
	wb := testWorkbook()
	wb.Sheets = append(wb.Sheets, &Sheet{Title: "journal", SheetID: journalID, RowCount: 10, ColumnCount: 8, Rows: [][]any{}})
	return wb
}

func gr(sheet, r0, r1, c0, c1 int64) *sheets.GridRange {
	return &sheets.GridRange{SheetId: sheet, StartRowIndex: r0, EndRowIndex: r1, StartColumnIndex: c0, EndColumnIndex: c1}
}

func copyPaste(src, dst *sheets.GridRange, pasteType string) *sheets.Request {
	return &sheets.Request{CopyPaste: &sheets.CopyPasteRequest{Source: src, Destination: dst, PasteType: pasteType}}
}

// TestCopyPasteBeforeUpdateCells is the journal pattern: a copyPaste placed
// before an updateCells in the same batchUpdate records what the rows held
// at the instant of the write, in another tab.
func TestCopyPasteBeforeUpdateCells(t *testing.T) {
	e, svc := serve(t, journalBook())
	if err := e.SetFormula(bookID, "Inbox", 3, 3, `=HYPERLINK("x")`); err != nil {
		t.Fatal(err)
	}
	err := batch(svc, bookID,
		copyPaste(gr(inboxID, 1, 3, 0, 6), gr(journalID, 0, 2, 0, 6), "PASTE_NORMAL"),
		updateCells(&sheets.UpdateCellsRequest{
			Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 4},
			Rows:  []*sheets.RowData{row(str("read")), row(str("spam"))},
		}),
		// A second copy after the write sees the new values.
		copyPaste(gr(inboxID, 1, 3, 4, 5), gr(journalID, 0, 2, 6, 7), "PASTE_VALUES"),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{45002.0, "Ann", "ann@example.com", "hello", "new", "m1", "read"},
		{45003.0, "Bob", "bob@example.com", `=HYPERLINK("x")`, nil, "m2", "spam"},
	}
	if got := e.Cells(bookID, "journal"); !reflect.DeepEqual(got, want) {
		t.Errorf("journal\n got %#v\nwant %#v", got, want)
	}
	if got := e.Cells(bookID, "Inbox")[1][4]; got != "read" {
		t.Errorf("Inbox E2 = %v", got)
	}
	// PASTE_NORMAL keeps a formula a formula.
	if !e.Formula(bookID, "journal", 2, 3) {
		t.Error("PASTE_NORMAL turned the formula into a value")
	}
	// Not a write of the client's values: no ValueInputOptions entry of its
	// own (the updateCells gives the batch its one entry).
	if got := e.ValueInputOptions(); !reflect.DeepEqual(got, []string{"RAW"}) {
		t.Errorf("ValueInputOptions %q", got)
	}
}

func TestCopyPasteValuesTurnsFormulasIntoValues(t *testing.T) {
	e, svc := serve(t, journalBook())
	if err := e.SetFormula(bookID, "Inbox", 3, 3, "=1+1"); err != nil {
		t.Fatal(err)
	}
	if err := batch(svc, bookID, copyPaste(gr(inboxID, 2, 3, 3, 4), gr(journalID, 0, 1, 0, 1), "PASTE_VALUES")); err != nil {
		t.Fatal(err)
	}
	if e.Formula(bookID, "journal", 1, 0) {
		t.Error("PASTE_VALUES kept a formula")
	}
	// The value pasted is what the formula computes, a number now.
	vr, err := svc.Spreadsheets.Values.Get(bookID, "journal!A1").ValueRenderOption("FORMULA").Do()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(vr.Values, [][]any{{2.0}}) {
		t.Errorf("journal A1 %#v", vr.Values)
	}
	// A formula whose value the emulator doesn't compute is refused, not pasted as its text.
	if err := e.SetFormula(bookID, "Inbox", 3, 3, "=A1&B1"); err != nil {
		t.Fatal(err)
	}
	err = batch(svc, bookID, copyPaste(gr(inboxID, 2, 3, 3, 4), gr(journalID, 0, 1, 0, 1), "PASTE_VALUES"))
	if ge := apiErr(t, err); ge.Code != 501 || !strings.Contains(ge.Message, "=A1&B1") {
		t.Errorf("pasting an uncomputed formula's value: %v", err)
	}
	if e.ValueInputOptions() != nil {
		t.Errorf("a copyPaste-only batch was logged: %q", e.ValueInputOptions())
	}
}

func TestCopyPasteShapes(t *testing.T) {
	// The source is Inbox E1:F3 (3 x 2):
	//   Status ID / new m1 / (empty) m2
	cases := []struct {
		name string
		src  *sheets.GridRange
		dst  *sheets.GridRange
		want [][]any // the journal tab afterwards
	}{
		{"same size", gr(inboxID, 0, 3, 4, 6), gr(journalID, 1, 4, 1, 3),
			[][]any{{}, {nil, "Status", "ID"}, {nil, "new", "m1"}, {nil, nil, "m2"}}},
		{"a smaller destination still gets the whole source", gr(inboxID, 0, 3, 4, 6), gr(journalID, 1, 2, 1, 2),
			[][]any{{}, {nil, "Status", "ID"}, {nil, "new", "m1"}, {nil, nil, "m2"}}},
		{"a destination twice as tall repeats the source", gr(inboxID, 1, 3, 4, 6), gr(journalID, 0, 4, 0, 2),
			[][]any{{"new", "m1"}, {nil, "m2"}, {"new", "m1"}, {nil, "m2"}}},
		{"twice as wide and tall", gr(inboxID, 1, 2, 5, 6), gr(journalID, 0, 2, 0, 2),
			[][]any{{"m1", "m1"}, {"m1", "m1"}}},
		{"not a multiple: pasted once", gr(inboxID, 1, 3, 4, 6), gr(journalID, 0, 3, 0, 3),
			[][]any{{"new", "m1"}, {nil, "m2"}}},
		// A destination given by its top-left only runs to the grid's edge
		// (10 rows, 8 columns): 9 rows left, a multiple of 1 and 3, so the
		// source repeats down to the last row; 8 columns is not a multiple
		// of 3.
		{"a missing end index is the grid's edge", gr(inboxID, 0, 3, 3, 6), &sheets.GridRange{SheetId: journalID, StartRowIndex: 1},
			[][]any{{}, {"Message", "Status", "ID"}, {"hello", "new", "m1"}, {"=HYPERLINK(\"x\")", nil, "m2"},
				{"Message", "Status", "ID"}, {"hello", "new", "m1"}, {"=HYPERLINK(\"x\")", nil, "m2"},
				{"Message", "Status", "ID"}, {"hello", "new", "m1"}, {"=HYPERLINK(\"x\")", nil, "m2"}}},
		{"sheetId 0 omitted", &sheets.GridRange{StartRowIndex: 1, EndRowIndex: 2, StartColumnIndex: 1, EndColumnIndex: 3}, gr(journalID, 0, 1, 0, 1),
			[][]any{{"crm", "https://crm.example/hook"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc := serve(t, journalBook())
			if err := batch(svc, bookID, copyPaste(tc.src, tc.dst, "")); err != nil {
				t.Fatal(err)
			}
			if got := e.Cells(bookID, "journal"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("journal\n got %#v\nwant %#v", got, tc.want)
			}
			if g := e.Workbook(bookID).Sheets[4]; g.RowCount != 10 || g.ColumnCount != 8 {
				t.Errorf("the grid changed: %d x %d", g.RowCount, g.ColumnCount)
			}
		})
	}
}

func TestCopyPasteSameTabAndClearing(t *testing.T) {
	e, svc := serve(t, journalBook())
	// Overlapping blocks of one tab: the source is read before the paste.
	if err := batch(svc, bookID, copyPaste(gr(inboxID, 0, 3, 4, 6), gr(inboxID, 1, 4, 4, 6), "")); err != nil {
		t.Fatal(err)
	}
	got := e.Cells(bookID, "Inbox")
	var tail [][]any
	for _, r := range got {
		tail = append(tail, r[min(4, len(r)):])
	}
	if want := [][]any{{"Status", "ID"}, {"Status", "ID"}, {"new", "m1"}, {nil, "m2"}}; !reflect.DeepEqual(tail, want) {
		t.Errorf("Inbox E:F\n got %#v\nwant %#v", tail, want)
	}
	// Empty source cells empty what they land on.
	if err := batch(svc, bookID, copyPaste(gr(inboxID, 10, 12, 0, 6), gr(inboxID, 1, 3, 0, 6), "PASTE_VALUES")); err != nil {
		t.Fatal(err)
	}
	if got := e.Cells(bookID, "Inbox"); len(got) != 4 || len(got[1]) != 0 || len(got[2]) != 0 {
		t.Errorf("Inbox after pasting empty rows %#v", got)
	}
}

func TestCopyPasteRefusals(t *testing.T) {
	cases := []struct {
		name string
		req  *sheets.Request
		code int
		want string
	}{
		{"past the destination's last row", copyPaste(gr(inboxID, 0, 3, 0, 6), gr(journalID, 8, 9, 0, 1), ""),
			400, "Invalid requests[1].copyPaste: Range ('journal'!R9C1:R11C6) exceeds grid limits. Max rows: 10, max columns: 8"},
		{"past the destination's last column", copyPaste(gr(inboxID, 0, 1, 0, 6), gr(journalID, 0, 1, 4, 5), ""),
			400, "Range ('journal'!R1C5:R1C10) exceeds grid limits. Max rows: 10, max columns: 8"},
		{"source past the grid", copyPaste(gr(inboxID, 999, 1001, 0, 1), gr(journalID, 0, 1, 0, 1), ""),
			400, "exceeds grid limits. Max rows: 1000, max columns: 26"},
		{"no such source tab", copyPaste(gr(42, 0, 1, 0, 1), gr(journalID, 0, 1, 0, 1), ""),
			400, "No grid with id: 42"},
		{"no such destination tab", copyPaste(gr(inboxID, 0, 1, 0, 1), gr(43, 0, 1, 0, 1), ""),
			400, "No grid with id: 43"},
		{"no destination", &sheets.Request{CopyPaste: &sheets.CopyPasteRequest{Source: gr(inboxID, 0, 1, 0, 1)}},
			400, "destination is required"},
		{"unknown paste type", copyPaste(gr(inboxID, 0, 1, 0, 1), gr(journalID, 0, 1, 0, 1), "PASTE_ALL"),
			400, `Invalid value at 'paste_type' (type.googleapis.com/google.apps.sheets.v4.PasteType), "PASTE_ALL"`},
		{"paste type not emulated", copyPaste(gr(inboxID, 0, 1, 0, 1), gr(journalID, 0, 1, 0, 1), "PASTE_FORMAT"),
			501, "pasteType PASTE_FORMAT is not emulated"},
		{"transpose not emulated", &sheets.Request{CopyPaste: &sheets.CopyPasteRequest{Source: gr(inboxID, 0, 1, 0, 1), Destination: gr(journalID, 0, 1, 0, 1), PasteOrientation: "TRANSPOSE"}},
			501, "TRANSPOSE is not emulated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc := serve(t, journalBook())
			before := e.Workbook(bookID)
			err := batch(svc, bookID,
				updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: journalID}, Rows: []*sheets.RowData{row(str("first"))}}),
				tc.req)
			ge := apiErr(t, err)
			if ge.Code != tc.code || !strings.Contains(ge.Message, tc.want) || !strings.HasPrefix(ge.Message, "Invalid requests[1].copyPaste: ") {
				t.Errorf("got %d %q, want %d with %q", ge.Code, ge.Message, tc.code, tc.want)
			}
			if !reflect.DeepEqual(e.Workbook(bookID), before) {
				t.Error("the batch was partly applied")
			}
		})
	}
}

// ---- appendCells ----

func appendCells(sheet int64, rows ...*sheets.RowData) *sheets.Request {
	return &sheets.Request{AppendCells: &sheets.AppendCellsRequest{SheetId: sheet, Rows: rows, Fields: "userEnteredValue"}}
}

func TestAppendCellsAfterTheLastRowWithData(t *testing.T) {
	// Column A ends on row 2; column C has data on row 4; row 5 is stored
	// but holds nothing (as a cleared row does).
	wb := &Workbook{SpreadsheetID: "ap", Sheets: []*Sheet{
		{Title: "S", Rows: [][]any{{"id", "x", "note"}, {"r1"}, {}, {nil, nil, "late"}, {nil, ""}}},
		{Title: "Empty", SheetID: 1},
	}}
	e, svc := serve(t, wb)
	n := 3.5
	err := batch(svc, "ap",
		appendCells(0, row(str("r2"), &sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &n}}), row(str("=1+1"))),
		// A second appendCells in the same batch goes after the first.
		appendCells(0, row(str("r3"))),
		appendCells(1, row(str("first"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"id", "x", "note"}, {"r1"}, {}, {nil, nil, "late"}, {"r2", 3.5}, {"=1+1"}, {"r3"}}
	if got := e.Cells("ap", "S"); !reflect.DeepEqual(got, want) {
		t.Errorf("S\n got %#v\nwant %#v", got, want)
	}
	if e.Formula("ap", "S", 6, 0) {
		t.Error("a stringValue became a formula")
	}
	if got := e.Cells("ap", "Empty"); !reflect.DeepEqual(got, [][]any{{"first"}}) {
		t.Errorf("Empty %#v", got)
	}
	if got := e.ValueInputOptions(); !reflect.DeepEqual(got, []string{"RAW"}) {
		t.Errorf("ValueInputOptions %q", got)
	}
	// A formulaValue makes a formula, and the batch is logged FORMULA.
	if err := batch(svc, "ap", appendCells(0, row(formulaCell("=2+2")))); err != nil {
		t.Fatal(err)
	}
	if !e.Formula("ap", "S", 8, 0) {
		t.Error("formulaValue did not make a formula")
	}
	if got := e.ValueInputOptions(); !reflect.DeepEqual(got, []string{"RAW", "FORMULA"}) {
		t.Errorf("ValueInputOptions %q", got)
	}
}

func TestAppendCellsGrowsTheGrid(t *testing.T) {
	wb := &Workbook{SpreadsheetID: "ap", Sheets: []*Sheet{
		{Title: "S", RowCount: 2, ColumnCount: 2, Rows: [][]any{{"a", "b"}, {"c"}}},
	}}
	e, svc := serve(t, wb)
	if err := batch(svc, "ap", appendCells(0, row(str("d")), row(str("e"), str("f"), str("g")))); err != nil {
		t.Fatal(err)
	}
	ss, err := svc.Spreadsheets.Get("ap").Fields("sheets.properties.gridProperties").Do()
	if err != nil {
		t.Fatal(err)
	}
	if g := ss.Sheets[0].Properties.GridProperties; g.RowCount != 4 || g.ColumnCount != 3 {
		t.Errorf("grid %d x %d, want 4 x 3", g.RowCount, g.ColumnCount)
	}
	if got := e.Cells("ap", "S"); !reflect.DeepEqual(got, [][]any{{"a", "b"}, {"c"}, {"d"}, {"e", "f", "g"}}) {
		t.Errorf("S %#v", got)
	}
}

func TestAppendCellsRefusals(t *testing.T) {
	long := strings.Repeat("a", MaxCellChars+1)
	cases := []struct {
		name string
		wb   func() *Workbook
		req  *sheets.Request
		want string
	}{
		{"50,001 characters", journalBook, appendCells(inboxID, row(str(long))),
			"Your input contains more than the maximum of 50000 characters in a single cell."},
		{"no such tab", journalBook, appendCells(42, row(str("x"))), "No grid with id: 42"},
		{"no fields", journalBook, &sheets.Request{AppendCells: &sheets.AppendCellsRequest{SheetId: inboxID, Rows: []*sheets.RowData{row(str("x"))}}},
			"At least one field must be specified in 'fields'."},
		// 100 + 9,999,800 cells: two more rows of 100 would pass the limit.
		{"the workbook cell limit", func() *Workbook {
			return &Workbook{SpreadsheetID: bookID, Sheets: []*Sheet{
				{Title: "journal", SheetID: journalID, RowCount: 1, ColumnCount: 100, Rows: [][]any{{"x"}}},
				{Title: "Inbox", SheetID: inboxID, RowCount: 99_998, ColumnCount: 100},
			}}
		}, appendCells(journalID, row(str("y")), row(str("z"))), limitMsg},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc := serve(t, tc.wb())
			before := e.Workbook(bookID)
			err := batch(svc, bookID,
				updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: journalID}, Rows: []*sheets.RowData{row(str("first"))}}),
				tc.req)
			ge := apiErr(t, err)
			if ge.Code != 400 || !strings.Contains(ge.Message, tc.want) || !strings.HasPrefix(ge.Message, "Invalid requests[1].appendCells: ") {
				t.Errorf("got %d %q, want 400 with %q", ge.Code, ge.Message, tc.want)
			}
			if !reflect.DeepEqual(e.Workbook(bookID), before) {
				t.Error("the batch was partly applied")
			}
		})
	}
	// The limit is the limit: growing the workbook to exactly 10,000,000
	// cells fits; one row more does not.
	e, svc := serve(t, &Workbook{SpreadsheetID: "full", Sheets: []*Sheet{
		{Title: "S", RowCount: 1, ColumnCount: 100, Rows: [][]any{{"x"}}},
		{Title: "T", SheetID: 1, RowCount: 99_998, ColumnCount: 100},
	}})
	if err := batch(svc, "full", appendCells(0, row(str("y")))); err != nil {
		t.Fatal(err)
	}
	if got := e.Cells("full", "S"); !reflect.DeepEqual(got, [][]any{{"x"}, {"y"}}) {
		t.Errorf("S %#v", got)
	}
	_, err := svc.Spreadsheets.BatchUpdate("full", &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{appendCells(0, row(str("z")))},
	}).Fields(googleapi.Field("replies")).Do()
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "Invalid requests[0].appendCells: "+limitMsg {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	// A row wider than the grid grows its columns, within the limit too.
	err = batch(svc, "full", &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: 1, GridProperties: &sheets.GridProperties{RowCount: 2}}, Fields: "gridProperties.rowCount"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := batch(svc, "full", appendCells(1, row(make([]*sheets.CellData, 101)...))); err != nil {
		t.Fatal(err)
	}
	if g := e.Workbook("full").Sheets[1]; g.RowCount != 2 || g.ColumnCount != 101 {
		t.Errorf("T grid %d x %d, want 2 x 101", g.RowCount, g.ColumnCount)
	}
}
