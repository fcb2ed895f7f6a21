package emulator

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
	sheets "google.golang.org/api/sheets/v4"
)

func hideSheet(id int64, hidden bool) *sheets.Request {
	return &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: id, Hidden: hidden}, Fields: "hidden"}}
}

func protect(g *sheets.GridRange, desc string) *sheets.Request {
	return &sheets.Request{AddProtectedRange: &sheets.AddProtectedRangeRequest{
		ProtectedRange: &sheets.ProtectedRange{Range: g, WarningOnly: true, Description: desc}}}
}

// TestHiddenProtectedJournalTab: a tab made in one batch, hidden and
// protected with a warning only, as a journal tab is; spreadsheets.get
// with a mask reports all of it.
func TestHiddenProtectedJournalTab(t *testing.T) {
	e, svc, _ := newServer(t)
	res, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{SheetId: 77, Title: "journal",
			GridProperties: &sheets.GridProperties{RowCount: 5, ColumnCount: 8}}}},
		hideSheet(77, true),
		protect(&sheets.GridRange{SheetId: 77}, "written by triage"),
		protect(gr(inboxID, 0, 1, 0, 6), "header"),
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replies) != 4 || res.Replies[2].AddProtectedRange == nil || res.Replies[3].AddProtectedRange == nil {
		t.Fatalf("replies %+v", res.Replies)
	}
	pr := res.Replies[2].AddProtectedRange.ProtectedRange
	if pr.ProtectedRangeId <= 0 || !pr.WarningOnly || pr.Description != "written by triage" || pr.Range == nil ||
		!reflect.DeepEqual(*pr.Range, sheets.GridRange{SheetId: 77}) || !pr.RequestingUserCanEdit {
		t.Errorf("reply %+v range %+v", pr, pr.Range)
	}
	hdr := res.Replies[3].AddProtectedRange.ProtectedRange
	if hdr.ProtectedRangeId <= 0 || hdr.ProtectedRangeId == pr.ProtectedRangeId || !reflect.DeepEqual(*hdr.Range, *gr(inboxID, 0, 1, 0, 6)) {
		t.Errorf("header reply %+v range %+v", hdr, hdr.Range)
	}

	ss, err := svc.Spreadsheets.Get(bookID).Fields("sheets(properties(sheetId,title,hidden,gridProperties(rowCount,columnCount)),protectedRanges)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Sheets) != 5 {
		t.Fatalf("%d sheets", len(ss.Sheets))
	}
	j := ss.Sheets[4]
	if p := j.Properties; p.Title != "journal" || p.SheetId != 77 || !p.Hidden || p.GridProperties.RowCount != 5 || p.GridProperties.ColumnCount != 8 || p.Index != 0 {
		t.Errorf("journal properties %+v %+v", p, p.GridProperties)
	}
	if len(j.ProtectedRanges) != 1 || j.ProtectedRanges[0].ProtectedRangeId != pr.ProtectedRangeId || !j.ProtectedRanges[0].WarningOnly {
		t.Errorf("journal protected ranges %+v", j.ProtectedRanges)
	}
	if p := ss.Sheets[2]; p.Properties.Hidden || len(p.ProtectedRanges) != 1 || p.ProtectedRanges[0].Description != "header" {
		t.Errorf("Inbox %+v %+v", p.Properties, p.ProtectedRanges)
	}
	// The narrower mask of the brief: sheets.properties.hidden.
	ss, err = svc.Spreadsheets.Get(bookID).Fields("sheets.properties.hidden").Do()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ss.Sheets {
		// Visible tabs have nothing left under the mask: no properties.
		hidden := s.Properties != nil && s.Properties.Hidden
		if hidden != (i == 4) || (s.Properties != nil && s.Properties.Title != "") {
			t.Errorf("sheet %d properties %+v", i, s.Properties)
		}
	}
	// Not enforced: writes to a protected range go through.
	if _, err := svc.Spreadsheets.Values.Update(bookID, "journal!A1", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	// The workbook snapshot carries both (a whole-tab range: every index 0).
	wb := e.Workbook(bookID)
	if s := wb.Sheets[4]; !s.HiddenTab || len(s.ProtectedRanges) != 1 || s.ProtectedRanges[0] != (ProtectedRange{ProtectedRangeID: pr.ProtectedRangeId, Description: "written by triage", WarningOnly: true}) {
		t.Errorf("snapshot %+v", s)
	}
	// Shown again.
	if err := batch(svc, bookID, hideSheet(77, false)); err != nil {
		t.Fatal(err)
	}
	if e.Workbook(bookID).Sheets[4].HiddenTab {
		t.Error("still hidden")
	}
}

func TestHidingTheLastVisibleTab(t *testing.T) {
	e, svc := serve(t, &Workbook{SpreadsheetID: "h", Sheets: []*Sheet{
		{Title: "A", Rows: [][]any{{"a1"}}}, {Title: "B", SheetID: 1, Rows: [][]any{{"b1"}}},
	}})
	if err := batch(svc, "h", hideSheet(0, true)); err != nil {
		t.Fatal(err)
	}
	// A range without a sheet name is on the first visible tab.
	vr, err := svc.Spreadsheets.Values.Get("h", "A1").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Range != "B!A1" || vr.Values[0][0] != "b1" {
		t.Errorf("got %+v", vr)
	}
	// A hidden tab is still read and written by name.
	if vr, err := svc.Spreadsheets.Values.Get("h", "A!A1").Do(); err != nil || vr.Values[0][0] != "a1" {
		t.Errorf("hidden tab by name: %+v %v", vr, err)
	}
	before := e.Workbook("h")
	for _, reqs := range [][]*sheets.Request{
		{hideSheet(1, true)},
		{hideSheet(0, false), hideSheet(1, true), hideSheet(0, true)},
		{{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: 1}}},
	} {
		err := batch(svc, "h", reqs...)
		ge := apiErr(t, err)
		if ge.Code != 400 || !strings.Contains(ge.Message, "You can't") {
			t.Errorf("got %d %q", ge.Code, ge.Message)
		}
		if !reflect.DeepEqual(e.Workbook("h"), before) {
			t.Error("a refused batch changed the workbook")
		}
	}
	if err := batch(svc, "h", hideSheet(0, false), hideSheet(1, true)); err != nil {
		t.Fatal(err)
	}
	// spreadsheets.create can't hide them all either.
	_, err = svc.Spreadsheets.Create(&sheets.Spreadsheet{Sheets: []*sheets.Sheet{{Properties: &sheets.SheetProperties{Title: "x", Hidden: true}}}}).Do()
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "You can't hide all the sheets in a document." {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
}

// TestProtectedRangesMove: protected ranges move with inserted and deleted
// rows and columns, and go when what they cover is deleted.
func TestProtectedRangesMove(t *testing.T) {
	e, svc, _ := newServer(t)
	err := batch(svc, bookID,
		protect(gr(inboxID, 1, 3, 0, 0), "rows 2-3"), // end 0: every column
		protect(gr(inboxID, 0, 0, 5, 6), "column F"),
		protect(gr(inboxID, 4, 5, 0, 1), "A5"),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = batch(svc, bookID,
		&sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(inboxID, 2, 4)}}, // inside rows 2-3
		&sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: cols(inboxID, 0, 1)}}, // before F
		&sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: rows(inboxID, 6, 7)}}, // A5, moved to row 7
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteColumn(bookID, "Inbox", 0); err != nil {
		t.Fatal(err)
	}
	if err := e.InsertRows(bookID, "Inbox", 1, [][]any{{"new first row"}}); err != nil {
		t.Fatal(err)
	}
	got := e.Workbook(bookID).Sheets[2].ProtectedRanges
	var desc []string
	for _, p := range got {
		desc = append(desc, p.Description)
	}
	want := []ProtectedRange{
		{StartRowIndex: 2, EndRowIndex: 6},
		{StartRowIndex: 0, EndRowIndex: 0, StartColumnIndex: 5, EndColumnIndex: 6},
	}
	if len(got) != 2 || !reflect.DeepEqual(desc, []string{"rows 2-3", "column F"}) {
		t.Fatalf("protected ranges %+v", got)
	}
	for i := range want {
		g := got[i]
		g.ProtectedRangeID, g.Description, g.WarningOnly = 0, "", false
		g.startRowGiven, g.startColumnGiven = false, false // how the answer lists them, not the range
		if g != want[i] {
			t.Errorf("%s: %+v, want %+v", desc[i], g, want[i])
		}
	}
	// Shrinking the grid drops what is past the new edge.
	err = batch(svc, bookID, &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: inboxID, GridProperties: &sheets.GridProperties{ColumnCount: 5}},
		Fields:     "gridProperties.columnCount"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Workbook(bookID).Sheets[2].ProtectedRanges; len(got) != 1 || got[0].Description != "rows 2-3" {
		t.Errorf("after shrinking to 5 columns: %+v", got)
	}
}

func TestAddProtectedRangeRefusals(t *testing.T) {
	cases := []struct {
		name string
		req  *sheets.AddProtectedRangeRequest
		code int
		want string
	}{
		{"no range", &sheets.AddProtectedRangeRequest{ProtectedRange: &sheets.ProtectedRange{Description: "x"}}, 400, "protectedRange.range is required"},
		{"no such tab", &sheets.AddProtectedRangeRequest{ProtectedRange: &sheets.ProtectedRange{Range: &sheets.GridRange{SheetId: 42}}}, 400, "No grid with id: 42"},
		{"past the grid", &sheets.AddProtectedRangeRequest{ProtectedRange: &sheets.ProtectedRange{Range: gr(inboxID, 0, 1001, 0, 1)}}, 400, "exceeds grid limits"},
		{"warning only with editors", &sheets.AddProtectedRangeRequest{ProtectedRange: &sheets.ProtectedRange{Range: gr(inboxID, 0, 1, 0, 1), WarningOnly: true,
			Editors: &sheets.Editors{Users: []string{"a@example.com"}}}}, 400, "Cannot set editors on a warning-only protected range."},
		{"named range", &sheets.AddProtectedRangeRequest{ProtectedRange: &sheets.ProtectedRange{NamedRangeId: "n1"}}, 501, "not emulated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc, _ := newServer(t)
			before := e.Workbook(bookID)
			err := batch(svc, bookID, protect(gr(inboxID, 0, 1, 0, 1), "ok"), &sheets.Request{AddProtectedRange: tc.req})
			ge := apiErr(t, err)
			if ge.Code != tc.code || !strings.Contains(ge.Message, tc.want) || !strings.HasPrefix(ge.Message, "Invalid requests[1].addProtectedRange: ") {
				t.Errorf("got %d %q, want %d with %q", ge.Code, ge.Message, tc.code, tc.want)
			}
			if !reflect.DeepEqual(e.Workbook(bookID), before) {
				t.Error("the batch was partly applied")
			}
		})
	}
}

func TestHiddenAndProtectedPersist(t *testing.T) {
	e, svc, _ := newServer(t)
	path := filepath.Join(t.TempDir(), "book.json")
	e.SetPersist(bookID, path)
	if err := batch(svc, bookID, hideSheet(7, true), protect(gr(7, 0, 1, 0, 0), "k")); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadWorkbook(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded, e.Workbook(bookID)) {
		t.Errorf("persisted workbook differs\n got %+v\nwant %+v", loaded.Sheets[1], e.Workbook(bookID).Sheets[1])
	}
	if s := loaded.Sheets[1]; !s.HiddenTab || len(s.ProtectedRanges) != 1 || s.ProtectedRanges[0].EndRowIndex != 1 {
		t.Errorf("it's tab %+v", s)
	}
	// A masked batchUpdate answer keeps the protected range's reply.
	res, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{protect(gr(7, 1, 2, 0, 0), "k2")},
	}).Fields(googleapi.Field("replies.addProtectedRange.protectedRange.protectedRangeId")).Do()
	if err != nil {
		t.Fatal(err)
	}
	if id := res.Replies[0].AddProtectedRange.ProtectedRange.ProtectedRangeId; id <= 0 || res.Replies[0].AddProtectedRange.ProtectedRange.Description != "" {
		t.Errorf("masked reply %+v", res.Replies[0].AddProtectedRange.ProtectedRange)
	}
}

func TestParseWorkbookHiddenAndProtected(t *testing.T) {
	for _, tc := range []struct {
		json, want string
	}{
		{`{"spreadsheetId":"x","sheets":[{"title":"A","hidden":true,"rows":[]}]}`, "every tab is hidden"},
		{`{"spreadsheetId":"x","sheets":[{"title":"A","rows":[],"protectedRanges":[{"protectedRangeId":1,"endRowIndex":1001}]}]}`, "protectedRanges[0]"},
		{`{"spreadsheetId":"x","sheets":[{"title":"A","rows":[],"protectedRanges":[{"protectedRangeId":1},{"protectedRangeId":1}]}]}`, "used twice"},
	} {
		if _, err := ParseWorkbook([]byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.json, err, tc.want)
		}
	}
	wb, err := ParseWorkbook([]byte(`{"spreadsheetId":"x","sheets":[{"title":"A","rows":[]},{"title":"B","hidden":true,"rows":[],"protectedRanges":[{"startRowIndex":2},{"protectedRangeId":1}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := wb.Sheets[1]; !s.HiddenTab || len(s.ProtectedRanges) != 2 || s.ProtectedRanges[0].ProtectedRangeID != 2 || s.ProtectedRanges[0].StartRowIndex != 2 {
		t.Errorf("B %+v", s)
	}
}
