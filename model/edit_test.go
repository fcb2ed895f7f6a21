package model

import "testing"

// A conflict whose row was never found names the ID without a "row 0", and its reason is said
// once, followed by one "not written".
func TestConflictWithoutRowNamesTheID(t *testing.T) {
	c := Conflict{Edit: Edit{Tab: "Inbox", ID: "m1"}, Reason: "the sheet kept changing"}
	if got, want := c.String(), "Inbox m1: the sheet kept changing; not written"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	c.Row = 4
	if got, want := c.String(), "Inbox row 4 (m1): the sheet kept changing; not written"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
