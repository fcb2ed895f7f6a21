// Package a1 is the sheets' A1 notation as triage shows and writes it: a column's letters.
package a1

// ColumnLetter returns the A1 letters of a 0-based column index (0 → "A", 25 → "Z",
// 26 → "AA"); "" for a negative index.
func ColumnLetter(i int) string {
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
