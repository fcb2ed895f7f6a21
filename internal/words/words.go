// Package words is how triage's messages say a number of things: one row, 3 rows.
package words

import "strconv"

// Plural picks a word form by count: Plural(1, "row", "rows") is "row", Plural(3, ...) "rows".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n with its word: Count(1, "row", "rows") is "1 row", Count(3, ...) "3 rows".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}
