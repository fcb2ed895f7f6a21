package emulator

import (
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

// saneNumbers fails when msg holds a number that is neither one the request sent nor a size
// the grid can have: an index that overflowed while the message was built
// (R-9223372036854775808) or one made up from a huge one.
func saneNumbers(t *testing.T, msg string, sent ...int64) {
	t.Helper()
	for _, m := range regexp.MustCompile(`-?\d+`).FindAllString(msg, -1) {
		n, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			t.Errorf("%q: the number %s doesn't even parse", msg, m)
			continue
		}
		if n >= 0 && n <= maxRows {
			continue
		}
		ok := false
		for _, s := range sent {
			ok = ok || n == s
		}
		if !ok {
			t.Errorf("%q holds %d, which the request didn't send", msg, n)
		}
	}
}

// TestHugeAndNegativeIndexesHaveSaneErrors: a GridRange or GridCoordinate index that is huge
// or negative, sent by the real client, is refused with a message in Google's style that
// names the bound and the grid, never with an index that overflowed while being printed
// (R-9223372036854775808), and changes nothing. A DimensionRange's messages quote the index
// as sent.
func TestHugeAndNegativeIndexesHaveSaneErrors(t *testing.T) {
	const big, small = int64(math.MaxInt64), int64(math.MinInt64)
	const large = int64(1) << 40
	uc := func(g *sheets.GridRange) *sheets.Request {
		return updateCells(&sheets.UpdateCellsRequest{Range: g, Rows: []*sheets.RowData{row(str("x"))}})
	}
	at := func(r, c int64) *sheets.Request {
		return updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: r, ColumnIndex: c}, Rows: []*sheets.RowData{row(str("x"))}})
	}
	sortReq := func(g *sheets.GridRange) *sheets.Request {
		return &sheets.Request{SortRange: &sheets.SortRangeRequest{Range: g, SortSpecs: []*sheets.SortSpec{{SortOrder: "ASCENDING"}}}}
	}
	validation := func(g *sheets.GridRange) *sheets.Request {
		return &sheets.Request{SetDataValidation: &sheets.SetDataValidationRequest{Range: g}}
	}
	protect := func(g *sheets.GridRange) *sheets.Request {
		return &sheets.Request{AddProtectedRange: &sheets.AddProtectedRangeRequest{ProtectedRange: &sheets.ProtectedRange{Range: g}}}
	}
	cases := []struct {
		name string
		req  *sheets.Request
		sent []int64
		want string // the message after "Invalid requests[0].<kind>: "
	}{
		{"updateCells range starting at MaxInt64", uc(gr(inboxID, big, big, 0, 1)), []int64{big},
			"GridRange.startRowIndex[9223372036854775807] must be between 0 and 1000 (the rows of 'Inbox')"},
		{"updateCells range ending at MaxInt64", uc(gr(inboxID, 1, big, 0, 1)), []int64{big},
			"GridRange.endRowIndex[9223372036854775807] must be between 1 and 1000 (the rows of 'Inbox')"},
		{"updateCells range ending at 2^40 columns", uc(gr(inboxID, 1, 2, 2, large)), []int64{large},
			"GridRange.endColumnIndex[1099511627776] must be between 2 and 26 (the columns of 'Inbox')"},
		{"updateCells range starting at a huge column", uc(gr(inboxID, 1, 2, large, large+1)), []int64{large, large + 1},
			"GridRange.startColumnIndex[1099511627776] must be between 0 and 26 (the columns of 'Inbox')"},
		{"updateCells range starting at MinInt64", uc(gr(inboxID, small, 2, 0, 1)), []int64{small},
			"GridRange.startRowIndex[-9223372036854775808] must be between 0 and 1000 (the rows of 'Inbox')"},
		{"updateCells range ending before it starts", uc(gr(inboxID, 5, 3, 0, 1)), nil,
			"GridRange.endRowIndex[3] must be between 5 and 1000 (the rows of 'Inbox')"},
		{"updateCells range ending at a negative column", uc(gr(inboxID, 1, 2, 0, -1)), []int64{-1},
			"GridRange.endColumnIndex[-1] must be between 0 and 26 (the columns of 'Inbox')"},
		{"updateCells start at MaxInt64", at(big, 0), []int64{big},
			"Invalid range: row index 9223372036854775807 must be between 0 and 1000 (the rows of 'Inbox')"},
		{"updateCells start at a MaxInt64 column", at(1, big), []int64{big},
			"Invalid range: column index 9223372036854775807 must be between 0 and 26 (the columns of 'Inbox')"},
		{"updateCells start at MinInt64", at(small, 0), []int64{small},
			"Invalid range: row index -9223372036854775808 must be between 0 and 1000 (the rows of 'Inbox')"},
		{"copyPaste source at MaxInt64", copyPaste(gr(inboxID, big, big, 0, 1), gr(inboxID, 1, 2, 0, 1), ""), []int64{big},
			"GridRange.startRowIndex[9223372036854775807] must be between 0 and 1000 (the rows of 'Inbox')"},
		{"copyPaste destination to MaxInt64", copyPaste(gr(inboxID, 1, 2, 0, 1), gr(inboxID, 1, 2, 3, big), ""), []int64{big},
			"GridRange.endColumnIndex[9223372036854775807] must be between 3 and 26 (the columns of 'Inbox')"},
		{"sortRange to MaxInt64", sortReq(gr(inboxID, 1, big, 0, 6)), []int64{big},
			"GridRange.endRowIndex[9223372036854775807] must be between 1 and 1000 (the rows of 'Inbox')"},
		{"setDataValidation from MaxInt64", validation(gr(inboxID, 1, 2, big, big)), []int64{big},
			"GridRange.startColumnIndex[9223372036854775807] must be between 0 and 26 (the columns of 'Inbox')"},
		{"addProtectedRange from MaxInt64", protect(gr(inboxID, big, 0, 0, 1)), []int64{big},
			"GridRange.startRowIndex[9223372036854775807] must be between 0 and 1000 (the rows of 'Inbox')"},
		{"deleteDimension to MaxInt64", &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: rows(inboxID, 1, big)}}, []int64{big},
			"range.endIndex (9223372036854775807) is past the end of the grid (1000 rows)"},
		{"deleteDimension from MinInt64", &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: cols(inboxID, small, 2)}}, []int64{small},
			"range.startIndex (-9223372036854775808) must not be negative"},
		{"insertDimension from MaxInt64", &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rows(inboxID, big-1, big)}}, []int64{big - 1, big},
			"range.startIndex (9223372036854775806) is past the end of the grid (1000 rows)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc := serve(t, journalBook())
			before := e.Workbook(bookID)
			ge := apiErr(t, batch(svc, bookID, tc.req))
			kind := "updateCells"
			switch {
			case tc.req.CopyPaste != nil:
				kind = "copyPaste"
			case tc.req.SortRange != nil:
				kind = "sortRange"
			case tc.req.SetDataValidation != nil:
				kind = "setDataValidation"
			case tc.req.AddProtectedRange != nil:
				kind = "addProtectedRange"
			case tc.req.DeleteDimension != nil:
				kind = "deleteDimension"
			case tc.req.InsertDimension != nil:
				kind = "insertDimension"
			}
			if want := "Invalid requests[0]." + kind + ": " + tc.want; ge.Code != 400 || ge.Message != want {
				t.Errorf("got %d %q\nwant 400 %q", ge.Code, ge.Message, want)
			}
			saneNumbers(t, ge.Message, tc.sent...)
			if !reflect.DeepEqual(e.Workbook(bookID), before) {
				t.Error("a refused request changed the workbook")
			}
		})
	}
}

// TestHugeA1IndexesHaveSaneErrors: A1 ranges past the grid, up to the largest row and column
// A1 can name and beyond, are refused with Google's messages and sane numbers.
func TestHugeA1IndexesHaveSaneErrors(t *testing.T) {
	_, svc, _ := newServer(t)
	for rng, want := range map[string]string{
		"Inbox!A10000000":            "Range ('Inbox'!A10000000) exceeds grid limits. Max rows: 1000, max columns: 26",
		"Inbox!ZZZ1":                 "Range ('Inbox'!ZZZ1) exceeds grid limits. Max rows: 1000, max columns: 26",
		"Inbox!ZZZ10000000:ZZZ":      "Range ('Inbox'!ZZZ10000000:ZZZ) exceeds grid limits. Max rows: 1000, max columns: 26",
		"Inbox!A10000001":            "Unable to parse range: Inbox!A10000001",
		"Inbox!A9223372036854775808": "Unable to parse range: Inbox!A9223372036854775808",
		"Inbox!AAAA1":                "Unable to parse range: Inbox!AAAA1",
	} {
		_, err := svc.Spreadsheets.Values.Get(bookID, rng).Do()
		ge := apiErr(t, err)
		if ge.Code != 400 || ge.Message != want {
			t.Errorf("%s: got %d %q, want 400 %q", rng, ge.Code, ge.Message, want)
		}
		// A message may quote the range as given; any other number must be sane.
		var sent []int64
		for _, m := range regexp.MustCompile(`\d+`).FindAllString(rng, -1) {
			if n, err := strconv.ParseInt(m, 10, 64); err == nil {
				sent = append(sent, n)
			}
		}
		if !strings.HasPrefix(ge.Message, "Unable to parse range: ") {
			saneNumbers(t, ge.Message, sent...)
		}
	}
}
