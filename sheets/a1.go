package sheets

import (
	"strings"
)

// quoteTab returns a tab name as the sheet part of an A1 range: always in single quotes,
// with each apostrophe inside doubled, as Sheets requires ("it's" becomes a quoted "it" +
// two apostrophes + "s"). Quoting is valid for every name, so no name needs a special case.
func quoteTab(name string) string {
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}

// colLetter returns the A1 letters of a 0-based column (0 → A, 25 → Z, 26 → AA).
func colLetter(i int) string {
	if i < 0 {
		return ""
	}
	var b []byte
	for n := i + 1; n > 0; n = (n - 1) / 26 {
		b = append(b, byte('A'+(n-1)%26))
	}
	for l, r := 0, len(b)-1; l < r; l, r = l+1, r-1 {
		b[l], b[r] = b[r], b[l]
	}
	return string(b)
}
