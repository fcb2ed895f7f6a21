package emulator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"
)

const limitMsg = "This action would increase the number of cells in the workbook above the limit of 10000000 cells."

// twoTabs is a small workbook of two default 1000 x 26 grids (52,000 cells).
func twoTabs() *Workbook {
	return &Workbook{SpreadsheetID: "lim", Title: "Limits", Sheets: []*Sheet{
		{Title: "S", SheetID: 0, Hidden: []int{5}, Validations: map[string][]string{"E": {"new", "done"}}, Rows: [][]any{
			{"a", "b", "c", "d", "status", "id"},
			{1.0, "x", nil, nil, "new", "r1"},
			{2.0, "y", nil, nil, "done", "r2"},
		}},
		{Title: "T", SheetID: 1, Rows: [][]any{{"t"}}},
	}}
}

func serve(t *testing.T, wb *Workbook) (*Emulator, *sheets.Service) {
	t.Helper()
	e := New()
	e.AddWorkbook(wb)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return e, svc
}

func batch(svc *sheets.Service, id string, reqs ...*sheets.Request) error {
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Do()
	return err
}

func rows(sheet int64, start, end int64) *sheets.DimensionRange {
	return &sheets.DimensionRange{SheetId: sheet, Dimension: "ROWS", StartIndex: start, EndIndex: end}
}

func cols(sheet int64, start, end int64) *sheets.DimensionRange {
	return &sheets.DimensionRange{SheetId: sheet, Dimension: "COLUMNS", StartIndex: start, EndIndex: end}
}

// absurd is every request that asks the workbook to pass
// Google's 10,000,000-cell limit, from 2e9 rows to just one cell too many.
func absurd() []struct {
	name string
	do   func(svc *sheets.Service, id string) error
} {
	const huge = 2_000_000_000
	type c = struct {
		name string
		do   func(svc *sheets.Service, id string) error
	}
	one := func(r *sheets.Request) func(*sheets.Service, string) error {
		return func(svc *sheets.Service, id string) error { return batch(svc, id, r) }
	}
	return []c{
		{"insertDimension 2e9 rows inside the data", one(&sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(0, 1, 1+huge)}})},
		{"insertDimension 2e9 rows past the data", one(&sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(0, 999, 999+huge)}})},
		{"insertDimension one column too many", one(&sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: cols(0, 1, 1+9_949)}})},
		{"appendDimension 2e9 rows", one(&sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 1, Dimension: "ROWS", Length: huge}})},
		{"appendDimension max int rows", one(&sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 1, Dimension: "ROWS", Length: 1<<63 - 1}})},
		{"appendDimension one column too many", one(&sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 1, Dimension: "COLUMNS", Length: 9_949}})},
		{"updateSheetProperties 2e9 rows", one(&sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{SheetId: 1, GridProperties: &sheets.GridProperties{RowCount: huge}}, Fields: "gridProperties.rowCount"}})},
		{"updateSheetProperties just too many rows", one(&sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{SheetId: 1, GridProperties: &sheets.GridProperties{RowCount: 383_616}}, Fields: "gridProperties"}})},
		{"addSheet with 2e9 rows", one(&sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "big",
			GridProperties: &sheets.GridProperties{RowCount: huge, ColumnCount: 1}}}})},
		{"addSheet just too big", one(&sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "big",
			GridProperties: &sheets.GridProperties{RowCount: 9_948_001, ColumnCount: 1}}}})},
		{"values.update far down", func(svc *sheets.Service, id string) error {
			_, err := svc.Spreadsheets.Values.Update(id, "T!A400000", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
			return err
		}},
		{"values.update at ZZZ10000000", func(svc *sheets.Service, id string) error {
			_, err := svc.Spreadsheets.Values.Update(id, "T!ZZZ10000000", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
			return err
		}},
		{"values.append far down", func(svc *sheets.Service, id string) error {
			_, err := svc.Spreadsheets.Values.Append(id, "T!A400000:B", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
			return err
		}},
		{"values.batchUpdate: two writes each within the limit, not together", func(svc *sheets.Service, id string) error {
			_, err := svc.Spreadsheets.Values.BatchUpdate(id, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW", Data: []*sheets.ValueRange{
				{Range: "S!A200000", Values: [][]any{{"x"}}},
				{Range: "T!A200000", Values: [][]any{{"y"}}},
			}}).Do()
			return err
		}},
		{"a valid request, then one too many rows (atomic)", func(svc *sheets.Service, id string) error {
			return batch(svc, id,
				&sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(0, 1, 2)}},
				&sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 1, Dimension: "ROWS", Length: huge}})
		}},
	}
}

func TestWorkbookCellLimit(t *testing.T) {
	for _, tc := range absurd() {
		t.Run(tc.name, func(t *testing.T) {
			e, svc := serve(t, twoTabs())
			before := e.Workbook("lim")
			err := tc.do(svc, "lim")
			ge := apiErr(t, err)
			if ge.Code != 400 || !strings.HasSuffix(ge.Message, limitMsg) {
				t.Errorf("got %d %q, want 400 %q", ge.Code, ge.Message, limitMsg)
			}
			if !strings.Contains(ge.Body, `"status":"INVALID_ARGUMENT"`) {
				t.Errorf("body %s", ge.Body)
			}
			if after := e.Workbook("lim"); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused request changed the workbook")
			}
		})
	}
}

func TestWorkbookCellLimitBoundary(t *testing.T) {
	e, svc := serve(t, &Workbook{SpreadsheetID: "b", Sheets: []*Sheet{{Title: "S", RowCount: 1000, ColumnCount: 10, Rows: [][]any{{"a"}}}}})
	// 1,000,000 x 10 is exactly the limit: allowed.
	if err := batch(svc, "b", &sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{Dimension: "ROWS", Length: 999_000}}); err != nil {
		t.Fatal(err)
	}
	if s := e.Workbook("b").Sheets[0]; s.RowCount != 1_000_000 || s.ColumnCount != 10 {
		t.Fatalf("grid %dx%d", s.RowCount, s.ColumnCount)
	}
	// One more row, a new tab, a write past the grid: each one cell too many.
	err := batch(svc, "b", &sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{Dimension: "ROWS", Length: 1}})
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "Invalid requests[0].appendDimension: "+limitMsg {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	err = batch(svc, "b", &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "more", GridProperties: &sheets.GridProperties{RowCount: 1, ColumnCount: 1}}}})
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "Invalid requests[0].addSheet: "+limitMsg {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	_, err = svc.Spreadsheets.Values.Update("b", "S!K1", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != limitMsg {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if err := e.SetCell("b", "S", 1, 10, "x"); err == nil || !strings.Contains(err.Error(), limitMsg) {
		t.Errorf("SetCell past the limit: %v", err)
	}
	// Writing inside the full grid still works.
	if _, err := svc.Spreadsheets.Values.Update("b", "S!J1000000", &sheets.ValueRange{Values: [][]any{{"last"}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	// The "one too many" sizes of TestWorkbookCellLimit, one smaller: at the limit (within
	// one row of 26 cells of it).
	for _, req := range []*sheets.Request{
		{InsertDimension: &sheets.InsertDimensionRequest{Range: cols(0, 1, 1+9_948)}},
		{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{Properties: &sheets.SheetProperties{SheetId: 1, GridProperties: &sheets.GridProperties{RowCount: 383_615}}, Fields: "gridProperties"}},
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "big", GridProperties: &sheets.GridProperties{RowCount: 9_948_000, ColumnCount: 1}}}},
	} {
		e2, svc2 := serve(t, twoTabs())
		if err := batch(svc2, "lim", req); err != nil {
			t.Errorf("%+v: %v", req, err)
		}
		total := 0
		for _, s := range e2.Workbook("lim").Sheets {
			total += s.RowCount * s.ColumnCount
		}
		if total > MaxWorkbookCells || total <= MaxWorkbookCells-26 {
			t.Errorf("%d cells", total)
		}
	}
	// A workbook file above the limit does not load.
	wb := &Workbook{SpreadsheetID: "x", Sheets: []*Sheet{{Title: "A", RowCount: 5_000_000, ColumnCount: 1}, {Title: "B", RowCount: 5_000_001, ColumnCount: 1}}}
	if err := wb.Validate(); err == nil || !strings.Contains(err.Error(), "limit of 10000000") {
		t.Errorf("Validate: %v", err)
	}
}

func TestCreateRespectsTheLimit(t *testing.T) {
	e, svc := serve(t, twoTabs())
	_, err := svc.Spreadsheets.Create(&sheets.Spreadsheet{Sheets: []*sheets.Sheet{
		{Properties: &sheets.SheetProperties{Title: "A", GridProperties: &sheets.GridProperties{RowCount: 2_000_000_000, ColumnCount: 26}}},
	}}).Do()
	if ge := apiErr(t, err); ge.Code != 400 || !strings.HasSuffix(ge.Message, limitMsg) {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	// Data far down grows the grid past the limit.
	_, err = svc.Spreadsheets.Create(&sheets.Spreadsheet{Sheets: []*sheets.Sheet{
		{Properties: &sheets.SheetProperties{Title: "A"}, Data: []*sheets.GridData{{StartRow: 400_000, RowData: []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: &sheets.ExtendedValue{StringValue: ptr("x")}}}}}}}},
	}}).Do()
	if ge := apiErr(t, err); ge.Code != 400 || !strings.HasSuffix(ge.Message, limitMsg) {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	_, err = svc.Spreadsheets.Create(&sheets.Spreadsheet{Sheets: []*sheets.Sheet{
		{Properties: &sheets.SheetProperties{Title: "A"}, Data: []*sheets.GridData{{StartRow: -1, RowData: []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: &sheets.ExtendedValue{StringValue: ptr("x")}}}}}}}},
	}}).Do()
	if ge := apiErr(t, err); ge.Code != 400 {
		t.Errorf("negative startRow: got %d %q", ge.Code, ge.Message)
	}
	if n := len(e.SpreadsheetIDs()); n != 1 {
		t.Errorf("%d spreadsheets after refused creates", n)
	}
}

func ptr[T any](v T) *T { return &v }

// TestAbsurdRequestsAllocateNothing sends the 2e9-row requests in-process
// and measures what they cost: a size from a request is checked before
// anything is allocated for it, and rows inserted past the data cost
// nothing at all (rows are stored only as far as the data goes).
func TestAbsurdRequestsAllocateNothing(t *testing.T) {
	e := New()
	e.AddWorkbook(&Workbook{SpreadsheetID: "m", Sheets: []*Sheet{{Title: "S", RowCount: 1000, ColumnCount: 1, Rows: [][]any{{"a"}, {"b"}}}}})
	post := func(body string) int {
		req := httptest.NewRequest(http.MethodPost, "/v4/spreadsheets/m:batchUpdate", strings.NewReader(body))
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec.Code
	}
	measure := func(body string) (int, uint64) {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		code := post(body)
		runtime.ReadMemStats(&m1)
		return code, m1.TotalAlloc - m0.TotalAlloc
	}
	const budget = 8 << 20
	for _, body := range []string{
		`{"requests":[{"insertDimension":{"range":{"dimension":"ROWS","startIndex":1,"endIndex":2000000001}}}]}`,
		`{"requests":[{"insertDimension":{"range":{"dimension":"COLUMNS","startIndex":0,"endIndex":2000000000}}}]}`,
		`{"requests":[{"appendDimension":{"dimension":"ROWS","length":2000000000}}]}`,
		`{"requests":[{"updateSheetProperties":{"properties":{"gridProperties":{"rowCount":2000000000}},"fields":"gridProperties.rowCount"}}]}`,
		`{"requests":[{"addSheet":{"properties":{"gridProperties":{"rowCount":2000000000,"columnCount":2000000000}}}}]}`,
		`{"requests":[{"sortRange":{"range":{"startRowIndex":0,"endRowIndex":2,"endColumnIndex":2000000000}}}]}`,
	} {
		if code, n := measure(body); code != 400 || n > budget {
			t.Errorf("%s: status %d, allocated %d bytes", body, code, n)
		}
	}
	// 9,000,000 rows inserted after the data: allowed (1 column), free.
	if code, n := measure(`{"requests":[{"insertDimension":{"range":{"dimension":"ROWS","startIndex":500,"endIndex":9000500}}}]}`); code != 200 || n > budget {
		t.Errorf("insert past the data: status %d, allocated %d bytes", code, n)
	}
	if s := e.Workbook("m").Sheets[0]; s.RowCount != 9_001_000 {
		t.Errorf("rowCount %d", s.RowCount)
	}
}

// TestIndexChecks sends every request kind with an index or a size that is
// negative or outside the grid: each is a 400, and nothing changes.
func TestIndexChecks(t *testing.T) {
	const huge = 2_000_000_000
	dv := &sheets.DataValidationRule{Condition: &sheets.BooleanCondition{Type: "ONE_OF_LIST", Values: []*sheets.ConditionValue{{UserEnteredValue: "a"}}}}
	text := &sheets.ExtendedValue{StringValue: ptr("x")}
	oneCell := []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: text}}}}
	cases := []struct {
		name string
		req  *sheets.Request
	}{
		{"setDataValidation column -1", &sheets.Request{SetDataValidation: &sheets.SetDataValidationRequest{Rule: dv,
			Range: &sheets.GridRange{StartColumnIndex: -1, EndColumnIndex: 1}}}},
		{"setDataValidation past the last column", &sheets.Request{SetDataValidation: &sheets.SetDataValidationRequest{Rule: dv,
			Range: &sheets.GridRange{StartColumnIndex: 20, EndColumnIndex: 27}}}},
		{"setDataValidation row -1", &sheets.Request{SetDataValidation: &sheets.SetDataValidationRequest{Rule: dv,
			Range: &sheets.GridRange{StartRowIndex: -1, EndRowIndex: 3, StartColumnIndex: 4, EndColumnIndex: 5}}}},
		{"updateDimensionProperties column -1", &sheets.Request{UpdateDimensionProperties: &sheets.UpdateDimensionPropertiesRequest{
			Range: cols(0, -1, 1), Properties: &sheets.DimensionProperties{HiddenByUser: true}, Fields: "hiddenByUser"}}},
		{"updateDimensionProperties past the grid", &sheets.Request{UpdateDimensionProperties: &sheets.UpdateDimensionPropertiesRequest{
			Range: cols(0, 20, 30), Properties: &sheets.DimensionProperties{HiddenByUser: true}, Fields: "hiddenByUser"}}},
		{"deleteDimension rows past the grid", &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: rows(0, 5, 2000)}}},
		{"deleteDimension column -1", &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: cols(0, -1, 1)}}},
		{"deleteDimension every column", &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: cols(0, 0, 26)}}},
		{"insertDimension row -1", &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(0, -1, 1)}}},
		{"insertDimension past the grid", &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(0, 1001, 1002)}}},
		{"sortRange 2e9 columns wide", &sheets.Request{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{StartRowIndex: 1, EndRowIndex: 3, EndColumnIndex: huge}}}},
		{"sortRange starting past the data", &sheets.Request{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{StartRowIndex: 1, StartColumnIndex: 30}}}},
		{"sortRange rows past the grid", &sheets.Request{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{StartRowIndex: 1, EndRowIndex: 5000}}}},
		{"sortRange key column -1", &sheets.Request{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{StartRowIndex: 1, EndRowIndex: 3},
			SortSpecs: []*sheets.SortSpec{{DimensionIndex: -1}}}}},
		{"updateCells start row -1", &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{RowIndex: -1}, Rows: oneCell, Fields: "userEnteredValue"}}},
		{"updateCells start past the grid", &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{RowIndex: 1000}, Rows: oneCell, Fields: "userEnteredValue"}}},
		{"updateCells start at max int", &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{RowIndex: 1<<63 - 1}, Rows: oneCell, Fields: "userEnteredValue"}}},
		{"updateCells range past the grid", &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Range: &sheets.GridRange{StartRowIndex: 1, EndRowIndex: 1001}, Rows: oneCell, Fields: "userEnteredValue"}}},
		{"updateSheetProperties negative rowCount", &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{GridProperties: &sheets.GridProperties{RowCount: -5}}, Fields: "gridProperties.rowCount"}}},
		{"updateSheetProperties negative columnCount", &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{GridProperties: &sheets.GridProperties{ColumnCount: -5}}, Fields: "gridProperties"}}},
		{"updateSheetProperties index -1", &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{SheetId: 1, Index: -1}, Fields: "index"}}},
		{"updateSheetProperties blank title", &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{Title: "   "}, Fields: "title"}}},
		{"addSheet negative rowCount", &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "n",
			GridProperties: &sheets.GridProperties{RowCount: -1}}}}},
		{"addSheet index -1", &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "n", Index: -1}}}},
		{"addSheet blank title", &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: " \t"}}}},
		{"addSheet 20,000 columns", &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "n",
			GridProperties: &sheets.GridProperties{RowCount: 1, ColumnCount: 20_000}}}}},
		{"appendDimension negative length", &sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{Dimension: "ROWS", Length: -5}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc := serve(t, twoTabs())
			before := e.Workbook("lim")
			ge := apiErr(t, batch(svc, "lim", tc.req))
			if ge.Code != 400 || !strings.HasPrefix(ge.Message, "Invalid requests[0].") {
				t.Errorf("got %d %q", ge.Code, ge.Message)
			}
			if !reflect.DeepEqual(e.Workbook("lim"), before) {
				t.Error("a refused request changed the workbook")
			}
		})
	}
	t.Run("deleteSheet of the last sheet", func(t *testing.T) {
		e, svc := serve(t, &Workbook{SpreadsheetID: "one", Sheets: []*Sheet{{Title: "only", SheetID: 4}}})
		ge := apiErr(t, batch(svc, "one", &sheets.Request{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: 4}}))
		if ge.Code != 400 || ge.Message != "Invalid requests[0].deleteSheet: You can't remove all the sheets in a document." {
			t.Errorf("got %d %q", ge.Code, ge.Message)
		}
		if len(e.Workbook("one").Sheets) != 1 {
			t.Error("the last sheet was deleted")
		}
	})
	t.Run("messages", func(t *testing.T) {
		_, svc := serve(t, twoTabs())
		ge := apiErr(t, batch(svc, "lim", cases[1].req))
		if want := "Invalid requests[0].setDataValidation: Range ('S'!R1C21:R1000C27) exceeds grid limits. Max rows: 1000, max columns: 26"; ge.Message != want {
			t.Errorf("got %q\nwant %q", ge.Message, want)
		}
		ge = apiErr(t, batch(svc, "lim", cases[5].req))
		if want := "Invalid requests[0].deleteDimension: range.endIndex (2000) is past the end of the grid (1000 rows)"; ge.Message != want {
			t.Errorf("got %q\nwant %q", ge.Message, want)
		}
	})
}

// TestShrinkingDropsWhatIsPastTheEdge: shrinking a tab below a hidden or
// validated column drops them (they used to stay, and the saved file no
// longer loaded).
func TestShrinkingDropsWhatIsPastTheEdge(t *testing.T) {
	e, svc := serve(t, twoTabs())
	path := filepath.Join(t.TempDir(), "lim.json")
	e.SetPersist("lim", path)
	err := batch(svc, "lim", &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{GridProperties: &sheets.GridProperties{ColumnCount: 3, RowCount: 2}}, Fields: "gridProperties"}})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadWorkbook(path)
	if err != nil {
		t.Fatalf("the saved workbook does not load: %v", err)
	}
	s := loaded.Sheets[0]
	if s.RowCount != 2 || s.ColumnCount != 3 || len(s.Hidden) != 0 || len(s.Validations) != 0 || !reflect.DeepEqual(s.Rows, [][]any{{"a", "b", "c"}, {1.0, "x"}}) {
		t.Errorf("shrunk sheet %+v", s)
	}
}

// persisted serves twoTabs as workbook "lim", saved to a file (its path returned), with
// value written at cell through the API.
func persisted(t *testing.T, cell, value string) (*Emulator, *sheets.Service, string) {
	t.Helper()
	e, svc := serve(t, twoTabs())
	path := filepath.Join(t.TempDir(), "lim.json")
	e.SetPersist("lim", path)
	if _, err := svc.Spreadsheets.Values.Update("lim", cell, &sheets.ValueRange{Values: [][]any{{value}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	return e, svc, path
}

// TestAbsurdRequestsNeverBrickPersistedFile runs every absurd request of
// the issue against a persisted workbook: after each one the file on disk
// still loads, and holds what the emulator serves.
func TestAbsurdRequestsNeverBrickPersistedFile(t *testing.T) {
	e, svc, path := persisted(t, "T!B1", "saved")
	type attempt struct {
		name string
		do   func() error
	}
	var attempts []attempt
	for _, tc := range absurd() {
		attempts = append(attempts, attempt{tc.name, func() error { return tc.do(svc, "lim") }})
	}
	for _, req := range []*sheets.Request{
		{SetDataValidation: &sheets.SetDataValidationRequest{Range: &sheets.GridRange{StartColumnIndex: -3, EndColumnIndex: 1},
			Rule: &sheets.DataValidationRule{Condition: &sheets.BooleanCondition{Type: "ONE_OF_LIST", Values: []*sheets.ConditionValue{{UserEnteredValue: "x"}}}}}},
		{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{Properties: &sheets.SheetProperties{SheetId: 1, Title: " "}, Fields: "title"}},
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "  "}}},
		{UpdateDimensionProperties: &sheets.UpdateDimensionPropertiesRequest{Range: cols(0, 25, 40), Properties: &sheets.DimensionProperties{HiddenByUser: true}, Fields: "hiddenByUser"}},
	} {
		attempts = append(attempts, attempt{fmt.Sprintf("%+v", req), func() error { return batch(svc, "lim", req) }})
	}
	attempts = append(attempts, attempt{"SetCell far down", func() error { return e.SetCell("lim", "T", 400_000, 0, "x") }})
	for _, a := range attempts {
		if err := a.do(); err == nil {
			t.Errorf("%s: accepted", a.name)
		}
		loaded, err := LoadWorkbook(path)
		if err != nil {
			t.Fatalf("after %s the persisted workbook does not load: %v", a.name, err)
		}
		if !reflect.DeepEqual(loaded, e.Workbook("lim")) {
			t.Fatalf("after %s the file and the emulator differ", a.name)
		}
	}
}

// TestCommitRefusesUnloadableState: were a request ever to slip past the
// request-time checks, the change would be refused rather than kept and
// persisted. The state is broken by hand here, as only a bug could.
func TestCommitRefusesUnloadableState(t *testing.T) {
	e, svc, path := persisted(t, "T!A2", "ok")
	e.mu.Lock()
	e.books["lim"].sheets[0].valid[-1] = []string{"x"}
	e.mu.Unlock()
	_, err := svc.Spreadsheets.Values.Update("lim", "T!A3", &sheets.ValueRange{Values: [][]any{{"lost"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 500 || !strings.Contains(ge.Message, "unloadable") {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if err := e.SetCell("lim", "T", 4, 0, "lost"); !errors.Is(err, errUnloadable) {
		t.Errorf("SetCell: %v", err)
	}
	loaded, err := LoadWorkbook(path)
	if err != nil {
		t.Fatalf("the file no longer loads: %v", err)
	}
	if got := loaded.Sheets[1].Rows; !reflect.DeepEqual(got, [][]any{{"t"}, {"ok"}}) {
		t.Errorf("file rows %v", got)
	}
	if got := e.Cells("lim", "T"); !reflect.DeepEqual(got, [][]any{{"t"}, {"ok"}}) {
		t.Errorf("a refused change was kept in memory: %v", got)
	}

	// What only the file round trip catches: an id ParseWorkbook refuses.
	e2, svc2 := serve(t, &Workbook{SpreadsheetID: " ", Sheets: []*Sheet{{Title: "A"}}})
	e2.SetPersist(" ", path)
	_, err = svc2.Spreadsheets.Values.Update(" ", "A!A1", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 500 || !strings.Contains(ge.Message, "does not load") {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if _, err := LoadWorkbook(path); err != nil {
		t.Errorf("the file was overwritten with one that does not load: %v", err)
	}
}

func TestRequestLogIsBounded(t *testing.T) {
	e := New()
	e.AddWorkbook(testWorkbook())
	const extra = 50
	for i := range RequestLogLimit + extra {
		req := httptest.NewRequest(http.MethodPut, fmt.Sprintf("/v4/spreadsheets/book1/values/Sparse!A1?valueInputOption=RAW&n=%d", i), strings.NewReader(`{"values":[["x"]]}`))
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if n := e.Count(MethodValuesUpdate); n != RequestLogLimit+extra {
		t.Errorf("count %d, want the exact %d", n, RequestLogLimit+extra)
	}
	reqs := e.Requests()
	if len(reqs) != RequestLogLimit {
		t.Fatalf("log holds %d entries, want %d", len(reqs), RequestLogLimit)
	}
	if first, last := reqs[0].RawQuery, reqs[len(reqs)-1].RawQuery; !strings.HasSuffix(first, fmt.Sprintf("n=%d", extra)) || !strings.HasSuffix(last, fmt.Sprintf("n=%d", RequestLogLimit+extra-1)) {
		t.Errorf("log keeps %q .. %q, want the most recent", first, last)
	}
	if n := len(e.ValueInputOptions()); n != RequestLogLimit {
		t.Errorf("ValueInputOptions holds %d entries", n)
	}
	e.mu.Lock()
	if c := cap(e.reqs); c > 2*RequestLogLimit {
		t.Errorf("log backing array %d", c)
	}
	e.mu.Unlock()
	// One entry's size is bounded too.
	long := strings.Repeat("x", 100_000)
	req := httptest.NewRequest(http.MethodGet, "/v4/spreadsheets/book1/values/A1?junk="+long, nil)
	req.Header.Set("Authorization", "Bearer "+long)
	e.ServeHTTP(httptest.NewRecorder(), req)
	r := e.Requests()[RequestLogLimit-1]
	if len(r.RawQuery) > 4096 || len(r.Authorization) > 4096 || !strings.HasPrefix(r.RawQuery, "junk=xxx") {
		t.Errorf("logged query %d bytes, authorization %d bytes", len(r.RawQuery), len(r.Authorization))
	}
}
