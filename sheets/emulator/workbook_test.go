package emulator

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseWorkbook(t *testing.T) {
	wb, err := ParseWorkbook([]byte(`{
	  "spreadsheetId": "demo", "title": "Demo",
	  "sheets": [
	    {"title": "Inbox", "hiddenColumns": [5], "validations": {"e": ["new", "done"]},
	     "formulas": ["C2"],
	     "rows": [["Name", 1, true, null], ["x", "", "=A1"]]},
	    {"title": "Other", "rows": []},
	    {"title": "Third", "sheetId": 5}
	  ]}`))
	if err != nil {
		t.Fatal(err)
	}
	if wb.TimeZone != "Etc/UTC" || wb.Locale != "en_US" {
		t.Errorf("defaults %q %q", wb.TimeZone, wb.Locale)
	}
	s := wb.Sheets[0]
	if s.RowCount != 1000 || s.ColumnCount != 26 || s.SheetID != 0 {
		t.Errorf("sheet %+v", s)
	}
	if ids := []int64{wb.Sheets[1].SheetID, wb.Sheets[2].SheetID}; !reflect.DeepEqual(ids, []int64{1, 5}) {
		t.Errorf("sheet ids %v", ids)
	}
	if !reflect.DeepEqual(s.Rows, [][]any{{"Name", 1.0, true}, {"x", nil, "=A1"}}) {
		t.Errorf("rows %#v", s.Rows)
	}
	if !reflect.DeepEqual(s.Validations, map[string][]string{"E": {"new", "done"}}) || !reflect.DeepEqual(s.Hidden, []int{5}) || !reflect.DeepEqual(s.Formulas, []string{"C2"}) {
		t.Errorf("sheet %+v", s)
	}
}

func TestParseWorkbookErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "empty"},
		{`{"spreadsheetId": "x", "sheets": [}`, "line 1 column 35"},
		{"{\n  \"spreadsheetId\": \"x\",\n  \"sheets\": 3}", `line 3 column 14: "sheets"`},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "row": []}]}`, `unknown field "row"`},
		{`{"title": "t", "sheets": [{"title": "A"}]}`, `"spreadsheetId" is missing`},
		{`{"spreadsheetId": "x", "sheets": []}`, "no sheets"},
		{`{"spreadsheetId": "x", "sheets": [{"title": ""}]}`, "sheets[0]: title is empty"},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A"}, {"title": "a"}]}`, `sheets[1] "a": title is used by sheets[0] too`},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "sheetId": 4}, {"title": "B", "sheetId": 4}]}`, "sheetId 4 is used twice"},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "rows": [[1], [2, {"a": 1}]]}]}`, `sheets[0] "A": cell B2: unsupported value`},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "validations": {"E1": []}}]}`, `validations: "E1" is not a column letter`},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "hiddenColumns": [26]}]}`, "hiddenColumns: 26 is not a column"},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "rows": [["a"]], "formulas": ["A1"]}]}`, `cell A1 does not hold text starting with "="`},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "formulas": ["A1:B2"]}]}`, `formulas: "A1:B2" is not a cell`},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "rows": [[], []], "rowCount": 1}]}`, "rowCount 1 is smaller than its 2 rows"},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A"}]} {}`, "unexpected data after"},
		{`{"spreadsheetId": "x", "sheets": [{"title": "A", "rows": [["` + strings.Repeat("x", MaxCellChars+1) + `"]]}]}`, "more than 50000 characters"},
	}
	for _, tc := range tests {
		_, err := ParseWorkbook([]byte(tc.in))
		if err == nil {
			t.Errorf("%.60s: no error", tc.in)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: error %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestAddWorkbookDefaultsAndCopies(t *testing.T) {
	e := New()
	wb := &Workbook{Sheets: []*Sheet{{Title: "A", Rows: [][]any{{1, "x"}}}, {Title: "B"}}}
	e.AddWorkbook(wb)
	if len(wb.SpreadsheetID) != 44 {
		t.Fatalf("generated id %q", wb.SpreadsheetID)
	}
	wb.Sheets[0].Rows[0][1] = "changed"
	got := e.Workbook(wb.SpreadsheetID)
	if got.Sheets[0].Rows[0][1] != "x" || got.Sheets[0].Rows[0][0] != 1.0 {
		t.Errorf("rows %#v", got.Sheets[0].Rows)
	}
	if got.Sheets[1].SheetID != 1 {
		t.Errorf("second sheet id %d", got.Sheets[1].SheetID)
	}
	if ids := e.SpreadsheetIDs(); len(ids) != 1 || ids[0] != wb.SpreadsheetID {
		t.Errorf("ids %v", ids)
	}
	// Replacing by ID.
	e.AddWorkbook(&Workbook{SpreadsheetID: wb.SpreadsheetID, Sheets: []*Sheet{{Title: "C"}}})
	if got := e.Workbook(wb.SpreadsheetID); len(got.Sheets) != 1 || got.Sheets[0].Title != "C" {
		t.Errorf("not replaced: %+v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("AddWorkbook accepted an invalid workbook")
		}
	}()
	e.AddWorkbook(&Workbook{SpreadsheetID: "bad", Sheets: []*Sheet{{Title: "A"}, {Title: "A"}}})
}

func TestMaskParse(t *testing.T) {
	m, err := parseMask("properties(title,timeZone),sheets(properties(sheetId,title,gridProperties),data.columnMetadata.hiddenByUser)")
	if err != nil {
		t.Fatal(err)
	}
	if !m.reaches("sheets", "data") || m.reaches("sheets", "merges") || !m.reaches("properties", "title") || m.reaches("properties", "locale") {
		t.Error("reaches")
	}
	if !m.child("sheets").child("data").child("columnMetadata").child("hiddenByUser").all {
		t.Error("leaf not selected")
	}
	m, err = parseMask("sheets/data/rowData/values/dataValidation,spreadsheetId")
	if err != nil || !m.reaches("sheets", "data", "rowData") || !m.reaches("spreadsheetId", "anything") {
		t.Errorf("slash paths: %v", err)
	}
	if m, err := parseMask("*"); err != nil || !m.reaches("sheets", "data") {
		t.Errorf("*: %v", err)
	}
	for _, bad := range []string{"", "a(", "a)", "a,,b", "a(b", "a..b", "a b"} {
		if _, err := parseMask(bad); err == nil {
			t.Errorf("parseMask(%q) accepted", bad)
		}
	}
}
