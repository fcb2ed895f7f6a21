package emulator

import (
	"testing"

	a1notation "github.com/triage-dev/triage/internal/a1"
)

func TestParseRange(t *testing.T) {
	open := -1
	tests := []struct {
		in   string
		want Range
		str  string
	}{
		{"Sheet1!A:A", Range{Sheet: "Sheet1", EndRow: open, EndCol: 1}, "Sheet1!A:A"},
		{"Sheet1!A5:A", Range{Sheet: "Sheet1", StartRow: 4, EndRow: open, EndCol: 1}, "Sheet1!A5:A"},
		{"Sheet1!A1:F10", Range{Sheet: "Sheet1", EndRow: 10, EndCol: 6}, "Sheet1!A1:F10"},
		{"Sheet1!1:2", Range{Sheet: "Sheet1", EndRow: 2, EndCol: open}, "Sheet1!1:2"},
		{"Sheet1!A1", Range{Sheet: "Sheet1", EndRow: 1, EndCol: 1, Single: true}, "Sheet1!A1"},
		{"Sheet1!$B$3", Range{Sheet: "Sheet1", StartRow: 2, StartCol: 1, EndRow: 3, EndCol: 2, Single: true}, "Sheet1!B3"},
		{"Sheet1!b2:a1", Range{Sheet: "Sheet1", EndRow: 2, EndCol: 2}, "Sheet1!A1:B2"},
		{"Sheet1", Range{Sheet: "Sheet1", EndRow: open, EndCol: open}, "Sheet1"},
		{"'My Sheet'!A1", Range{Sheet: "My Sheet", EndRow: 1, EndCol: 1, Single: true}, "'My Sheet'!A1"},
		{"'it''s'!A1:B", Range{Sheet: "it's", EndRow: open, EndCol: 2}, "'it''s'!A:B"},
		{"'failed calls'!A1:F", Range{Sheet: "failed calls", EndRow: open, EndCol: 6}, "'failed calls'!A:F"},
		{"'failed calls'", Range{Sheet: "failed calls", EndRow: open, EndCol: open}, "'failed calls'"},
		{"failed calls!A:B", Range{Sheet: "failed calls", EndRow: open, EndCol: 2}, "'failed calls'!A:B"},
		{"A1:B2", Range{EndRow: 2, EndCol: 2}, "A1:B2"},
		{"C7", Range{StartRow: 6, StartCol: 2, EndRow: 7, EndCol: 3, Single: true}, "C7"},
		{"Sheet1!A:B5", Range{Sheet: "Sheet1", EndRow: 5, EndCol: 2}, "Sheet1!A1:B5"},
		{"Sheet1!AA10:AB", Range{Sheet: "Sheet1", StartRow: 9, StartCol: 26, EndRow: open, EndCol: 28}, "Sheet1!AA10:AB"},
		{"'a!b'!C1:C", Range{Sheet: "a!b", EndRow: open, StartCol: 2, EndCol: 3}, "'a!b'!C:C"},
		{"Q3", Range{StartRow: 2, StartCol: 16, EndRow: 3, EndCol: 17, Single: true}, "Q3"},
	}
	for _, tc := range tests {
		got, err := ParseRange(tc.in)
		if err != nil {
			t.Errorf("ParseRange(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseRange(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if s := got.String(); s != tc.str {
			t.Errorf("ParseRange(%q).String() = %q, want %q", tc.in, s, tc.str)
		}
	}
}

func TestParseRangeErrors(t *testing.T) {
	for _, in := range []string{
		"", "!A1", "Sheet1!", "'unterminated!A1", "'x'A1", "Sheet1!A0", "Sheet1!A1:B2:C3",
		"Sheet1!A:5", "Sheet1!5:A", "Sheet1!AAAA1", "Sheet1!A-1", "''!A1", "Sheet1!A", "Sheet1!7",
		"Sheet1!A1:", "Sheet1!:B2", "Sheet1!A99999999",
	} {
		r, err := ParseRange(in)
		if err == nil {
			t.Errorf("ParseRange(%q) = %+v, want an error", in, r)
			continue
		}
		if want := "Unable to parse range: " + in; err.Error() != want {
			t.Errorf("ParseRange(%q) error %q, want %q", in, err, want)
		}
	}
}

func TestColumnLetters(t *testing.T) {
	for i, s := range map[int]string{0: "A", 25: "Z", 26: "AA", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA", 18277: "ZZZ"} {
		if got := a1notation.ColumnLetter(i); got != s {
			t.Errorf("a1notation.ColumnLetter(%d) = %q, want %q", i, got, s)
		}
		if got, ok := ColumnIndex(s); !ok || got != i {
			t.Errorf("ColumnIndex(%q) = %d, %v, want %d", s, got, ok, i)
		}
	}
	for _, bad := range []string{"", "A1", "AAAA", "é"} {
		if _, ok := ColumnIndex(bad); ok {
			t.Errorf("ColumnIndex(%q) accepted", bad)
		}
	}
}

func TestQuoteSheet(t *testing.T) {
	for in, want := range map[string]string{
		"Sheet1":       "Sheet1",
		"failed_calls": "failed_calls",
		"Inbox":        "Inbox",
		"failed calls": "'failed calls'",
		"it's":         "'it''s'",
		"Q3":           "'Q3'",
		"R1C1":         "'R1C1'",
		"2024":         "'2024'",
		"a-b":          "'a-b'",
	} {
		if got := QuoteSheet(in); got != want {
			t.Errorf("QuoteSheet(%q) = %q, want %q", in, got, want)
		}
	}
}
