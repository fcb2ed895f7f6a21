package postgres

import (
	"strings"
	"testing"
)

// The cell codec: every string comes back as it went in; a string without NUL or DLE is
// stored as it is; two different cells are never stored alike (so an equality in SQL decides
// as on the sheet); nothing stored holds a NUL.
func TestCellCodecRoundTrips(t *testing.T) {
	cases := []string{"", "plain", "Bell\x00Ringer", "\x00", "\x00\x00", "\x10", "\x100", "\x10\x10", "a\x10b", "end\x10",
		"\x10\x00\x10", "ünïcode \u202e bidi \x1b[31m", strings.Repeat("\x00\x10x", 1000)}
	for b := range 256 {
		cases = append(cases, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"\x10"+string([]byte{byte(b)}))
	}
	stored := map[string]string{}
	for _, c := range cases {
		db := toDB(c)
		if strings.IndexByte(db, 0) >= 0 {
			t.Errorf("toDB(%q) = %q holds a NUL", c, db)
		}
		if got := fromDB(db); got != c {
			t.Errorf("fromDB(toDB(%q)) = %q", c, got)
		}
		if !strings.ContainsAny(c, "\x00\x10") && db != c {
			t.Errorf("toDB(%q) = %q: a cell without NUL or DLE must be stored as it is", c, db)
		}
		if other, ok := stored[db]; ok && other != c {
			t.Errorf("%q and %q are both stored as %q", other, c, db)
		}
		stored[db] = c
	}
}
