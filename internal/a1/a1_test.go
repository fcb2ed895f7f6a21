package a1

import "testing"

func TestColumnLetter(t *testing.T) {
	for i, s := range map[int]string{-1: "", 0: "A", 25: "Z", 26: "AA", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA", 18277: "ZZZ"} {
		if got := ColumnLetter(i); got != s {
			t.Errorf("ColumnLetter(%d) = %q, want %q", i, got, s)
		}
	}
}
