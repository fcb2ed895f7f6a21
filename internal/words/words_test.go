package words

import "testing"

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
