package model

import "testing"

func TestColumnLetter(t *testing.T) {
	for i, s := range map[int]string{-1: "", 0: "A", 25: "Z", 26: "AA", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA", 18277: "ZZZ"} {
		if got := ColumnLetter(i); got != s {
			t.Errorf("ColumnLetter(%d) = %q, want %q", i, got, s)
		}
	}
}

func TestPluralAndCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 rows", 1: "1 row", 2: "2 rows"} {
		if got := Count(n, "row", "rows"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if Plural(1, "is", "are") != "is" || Plural(3, "is", "are") != "are" {
		t.Error("Plural picks the wrong form")
	}
}
