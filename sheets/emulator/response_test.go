package emulator

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
	sheets "google.golang.org/api/sheets/v4"
)

const readBackMask = "updatedSpreadsheet(sheets(properties(sheetId,title,gridProperties(rowCount,columnCount)),data(startRow,startColumn,rowData(values(effectiveValue,userEnteredValue)))))"

// cellText renders a CellData for comparisons: "" for an empty cell,
// "=..." for a formula (its userEnteredValue), else the effective value;
// it also checks the two agree.
func cellText(t *testing.T, c *sheets.CellData) string {
	t.Helper()
	ev, uv := c.EffectiveValue, c.UserEnteredValue
	switch {
	case ev == nil && uv == nil:
		return ""
	case ev == nil || uv == nil:
		t.Errorf("effectiveValue %+v, userEnteredValue %+v: one is missing", ev, uv)
		return "?"
	case uv.FormulaValue != nil:
		return *uv.FormulaValue
	case ev.StringValue != nil && uv.StringValue != nil && *ev.StringValue == *uv.StringValue:
		return *ev.StringValue
	case ev.NumberValue != nil && uv.NumberValue != nil && *ev.NumberValue == *uv.NumberValue:
		return strconv.FormatFloat(*ev.NumberValue, 'f', -1, 64)
	}
	t.Errorf("effectiveValue %+v and userEnteredValue %+v disagree", ev, uv)
	return "?"
}

func gridText(t *testing.T, d *sheets.GridData) [][]string {
	t.Helper()
	var out [][]string
	for _, rd := range d.RowData {
		row := []string{}
		for _, v := range rd.Values {
			row = append(row, cellText(t, v))
		}
		out = append(out, row)
	}
	return out
}

// TestReadBackAcrossSheetsMadeInTheBatch: one batchUpdate creates a tab,
// grows another, copies, writes, and returns, through a field mask, the
// ranges named in responseRanges (several, in several tabs, one of the
// new tab and one that exists only since the growth) as they are right
// after the write.
func TestReadBackAcrossSheetsMadeInTheBatch(t *testing.T) {
	_, svc, _ := newServer(t)
	formula := "=1+1"
	res, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{
			{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{SheetId: 77, Title: "journal",
				GridProperties: &sheets.GridProperties{RowCount: 3, ColumnCount: 8}}}},
			// Two rows before Ann's: the grid grows to 1002 rows.
			{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(inboxID, 1, 3)}},
			// Ann and Bob, now rows 4 and 5, copied before they are written.
			copyPaste(gr(inboxID, 3, 5, 0, 6), gr(77, 0, 2, 0, 6), "PASTE_NORMAL"),
			updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1}, Rows: []*sheets.RowData{
				row(str("t9"), str("Zed"), nil, nil, str("new"), str("m9")),
				row(str("t8"), str("Yan"), nil, nil, str("new"), str("m8")),
			}}),
			updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 3, ColumnIndex: 4}, Rows: []*sheets.RowData{row(str("read"))}}),
			updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1000}, Rows: []*sheets.RowData{row(str("tail"))}}),
			updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: 77, ColumnIndex: 7}, Rows: []*sheets.RowData{
				row(&sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{FormulaValue: &formula}}),
			}}),
		},
		IncludeSpreadsheetInResponse: true,
		ResponseRanges:               []string{"journal!A1:H2", "Inbox!A2:F4", "'failed calls'!A1:B1", "Inbox!A1001:A1002"},
	}).Fields(googleapi.Field(readBackMask)).Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.SpreadsheetId != "" || len(res.Replies) != 0 {
		t.Errorf("masked out fields came back: %q, %d replies", res.SpreadsheetId, len(res.Replies))
	}
	ss := res.UpdatedSpreadsheet
	if ss == nil || ss.Properties != nil || ss.SpreadsheetId != "" {
		t.Fatalf("updatedSpreadsheet %+v", ss)
	}
	// The tabs the ranges name, in the workbook's order, one GridData per
	// range in the order of responseRanges.
	type props struct {
		id         int64
		title      string
		rows, cols int64
		data       int
	}
	var got []props
	for _, s := range ss.Sheets {
		p := s.Properties
		if p == nil || p.GridProperties == nil || p.Index != 0 || p.SheetType != "" {
			t.Fatalf("properties %+v (the mask keeps sheetId, title and the grid's size)", p)
		}
		got = append(got, props{p.SheetId, p.Title, p.GridProperties.RowCount, p.GridProperties.ColumnCount, len(s.Data)})
	}
	want := []props{{0, "failed calls", 1000, 26, 1}, {inboxID, "Inbox", 1002, 26, 2}, {77, "journal", 3, 8, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sheets\n got %+v\nwant %+v", got, want)
	}
	check := func(name string, d *sheets.GridData, startRow int64, want [][]string) {
		t.Helper()
		if d.StartRow != startRow || d.StartColumn != 0 || d.RowMetadata != nil || d.ColumnMetadata != nil {
			t.Errorf("%s: start %d,%d, metadata %v %v", name, d.StartRow, d.StartColumn, d.RowMetadata, d.ColumnMetadata)
		}
		if got := gridText(t, d); !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n got %q\nwant %q", name, got, want)
		}
	}
	check("'failed calls'!A1:B1", ss.Sheets[0].Data[0], 0, [][]string{{"timestamp", "source"}})
	check("Inbox!A2:F4", ss.Sheets[1].Data[0], 1, [][]string{
		{"t9", "Zed", "", "", "new", "m9"},
		{"t8", "Yan", "", "", "new", "m8"},
		{"45002", "Ann", "ann@example.com", "hello", "read", "m1"},
	})
	check("Inbox!A1001:A1002", ss.Sheets[1].Data[1], 1000, [][]string{{"tail"}})
	check("journal!A1:H2", ss.Sheets[2].Data[0], 0, [][]string{
		{"45002", "Ann", "ann@example.com", "hello", "new", "m1", "", "=1+1"},
		{"45003", "Bob", "bob@example.com", `=HYPERLINK("x")`, "", "m2"},
	})
}

// TestReadBackRangeRefused: a response range that names no tab (or a
// range past the grid) refuses the whole batch, as nothing can be answered.
func TestReadBackRangeRefused(t *testing.T) {
	e, svc, _ := newServer(t)
	before := e.Workbook(bookID)
	for _, rng := range []string{"nope!A1", "Inbox!A1001"} {
		_, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{
			Requests:                     []*sheets.Request{appendCells(inboxID, row(str("x")))},
			IncludeSpreadsheetInResponse: true,
			ResponseRanges:               []string{"Inbox!A1", rng},
		}).Fields(googleapi.Field(readBackMask)).Do()
		if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, "nope!A1") && !strings.Contains(ge.Message, "exceeds grid limits") {
			t.Errorf("%s: got %d %q", rng, ge.Code, ge.Message)
		}
		if !reflect.DeepEqual(e.Workbook(bookID), before) {
			t.Errorf("%s: the batch was applied", rng)
		}
	}
}
