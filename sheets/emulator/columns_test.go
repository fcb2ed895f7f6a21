package emulator

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

func TestInsertAndDeleteColumns(t *testing.T) {
	e, svc, _ := newServer(t)
	before := e.Workbook(bookID)
	if err := e.InsertColumns(bookID, "Inbox", 1, 2); err != nil {
		t.Fatal(err)
	}
	in := e.Workbook(bookID).Sheets[2]
	if in.ColumnCount != 28 || !reflect.DeepEqual(in.Hidden, []int{7}) || !reflect.DeepEqual(in.Validations, map[string][]string{"G": {"new", "read", "done"}}) {
		t.Errorf("Inbox after inserting 2 columns at B: %d columns, hidden %v, validations %v", in.ColumnCount, in.Hidden, in.Validations)
	}
	if got := in.Rows[1]; !reflect.DeepEqual(got, []any{45002.0, nil, nil, "Ann", "ann@example.com", "hello", "new", "m1"}) {
		t.Errorf("row 2 %#v", got)
	}
	// The same as insertDimension COLUMNS through the API.
	e2, svc2 := serve(t, testWorkbook())
	if err := batch(svc2, bookID, &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: cols(inboxID, 1, 3)}}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e2.Workbook(bookID), e.Workbook(bookID)) {
		t.Error("InsertColumns and insertDimension COLUMNS disagree")
	}
	// Appending columns at the grid's edge.
	if err := e.InsertColumns(bookID, "Inbox", 28, 1); err != nil {
		t.Fatal(err)
	}
	// Deleting them all again gives the workbook back.
	for _, c := range []int{28, 2, 1} {
		if err := e.DeleteColumn(bookID, "Inbox", c); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(e.Workbook(bookID), before) {
		t.Errorf("insert then delete changed Inbox: %+v", e.Workbook(bookID).Sheets[2])
	}
	// Deleting a column moves what is right of it left.
	if err := e.DeleteColumn(bookID, "Inbox", 0); err != nil {
		t.Fatal(err)
	}
	vr, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1:B1").Do()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(vr.Values, [][]any{{"Name", "Email"}}) {
		t.Errorf("A1:B1 %v", vr.Values)
	}
	if in := e.Workbook(bookID).Sheets[2]; in.ColumnCount != 25 || !reflect.DeepEqual(in.Hidden, []int{4}) || in.Validations["D"] == nil {
		t.Errorf("after deleting A: %d columns, hidden %v, validations %v", in.ColumnCount, in.Hidden, in.Validations)
	}
	if n := len(e.Requests()); n != 1 {
		t.Errorf("%d requests logged: direct changes are not requests", n)
	}
}

func TestInsertAndDeleteColumnsRefusals(t *testing.T) {
	e, _ := serve(t, &Workbook{SpreadsheetID: "c", Sheets: []*Sheet{
		{Title: "S", Rows: [][]any{{"a", "b"}}},
		{Title: "One", SheetID: 1, ColumnCount: 1, Rows: [][]any{{"x"}}},
	}})
	before := e.Workbook("c")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"negative index", e.InsertColumns("c", "S", -1, 1), "column -1 is outside 0..26"},
		{"past the edge", e.InsertColumns("c", "S", 27, 1), "column 27 is outside 0..26"},
		{"no columns", e.InsertColumns("c", "S", 0, 0), "0 columns"},
		{"no such tab", e.InsertColumns("c", "Nope", 0, 1), `has no tab "Nope"`},
		{"the workbook limit", e.InsertColumns("c", "S", 0, 10_000), limitMsg},
		{"the column limit", e.InsertColumns("c", "S", 0, 1<<40), "above the limit of 18278 columns"},
		{"delete past the edge", e.DeleteColumn("c", "S", 26), "column 26 is outside 0..25"},
		{"delete the last column", e.DeleteColumn("c", "One", 0), "can't delete all the columns"},
		{"delete on no such book", e.DeleteColumn("nope", "S", 0), `no spreadsheet "nope"`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	if !reflect.DeepEqual(e.Workbook("c"), before) {
		t.Error("a refused call changed the workbook")
	}
}

// TestHookInsertsColumnBetweenRequests: a hook inserts a column between
// the client's read of the header and its write by column letter, as
// another editor might: the write lands one column left of the one the
// client meant, which is what a client writing by position must survive.
func TestHookInsertsColumnBetweenRequests(t *testing.T) {
	e, svc, _ := newServer(t)
	var once sync.Once
	e.SetHook(func(r Request) {
		if r.Method == MethodValuesUpdate {
			once.Do(func() {
				if err := e.InsertColumns(bookID, "Inbox", 0, 1); err != nil {
					t.Error(err)
				}
			})
		}
	})
	vr, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!1:1").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Values[0][4] != "Status" {
		t.Fatalf("header %v", vr.Values)
	}
	// Status was E when read: the client writes E2.
	if _, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!E2", &sheets.ValueRange{Values: [][]any{{"read"}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	got := e.Cells(bookID, "Inbox")[1]
	if want := []any{nil, 45002.0, "Ann", "ann@example.com", "read", "new", "m1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("row 2\n got %#v\nwant %#v (the write hit Message, Status moved to F)", got, want)
	}
	e.SetHook(nil)
	// DeleteColumn from a hook too.
	e.SetHook(func(r Request) {
		if r.Method == MethodValuesGet {
			if err := e.DeleteColumn(bookID, "Inbox", 0); err != nil {
				t.Error(err)
			}
		}
	})
	vr, err = svc.Spreadsheets.Values.Get(bookID, "Inbox!A2").Do()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(vr.Values, [][]any{{"45002"}}) {
		t.Errorf("A2 after the hook's DeleteColumn: %v", vr.Values)
	}
}
