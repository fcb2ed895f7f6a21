package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// searchWorkbook is the test workbook with one long message holding "refund" three times
// (twice far below the first screen) and "Refund" once.
func searchWorkbook(t *testing.T) *model.Workbook {
	wb := testWorkbook(t)
	long := "Hello, I want a refund for order 42.\n" + strings.Repeat("filler line of the message\n", 40) +
		"Still no refund. Refund it please.\n" + strings.Repeat("more filler\n", 20) + "last word: refund"
	wb.Tabs[0].Records[0].Cells[3] = long
	return wb
}

// The detail view searches its text as less does: / opens a prompt on the last line, the view
// jumps to the first match and shows every match; n and N walk them, wrapping; a lower-case
// query matches any case, one with a capital only that case; esc in the prompt drops the
// search; J and K go to the next and the previous row, as n and N did before.
func TestPagerSearch(t *testing.T) {
	m := newLoaded(t, searchWorkbook(t), 100, 30)
	keys(m, "enter")
	if m.detail == nil {
		t.Fatal("no detail view")
	}
	keys(m, "/")
	if !m.detail.search.typing || !strings.Contains(plainScreen(m), "/█") {
		t.Fatalf("/ opens no search prompt:\n%s", plainScreen(m))
	}
	typeText(m, "refund")
	if got := len(m.detail.search.hits); got != 4 {
		t.Errorf("refund: %d matches, want 4 (Refund too: a lower-case query matches any case)", got)
	}
	keys(m, "enter")
	if m.detail.search.typing {
		t.Fatal("enter left the prompt open")
	}
	title := func() string { return strings.Split(plainScreen(m), "\n")[2] }
	if !strings.Contains(title(), "match 1/4 for refund") {
		t.Errorf("the title doesn't say which match: %q", title())
	}
	// Every match on screen is in reverse video.
	if !strings.Contains(screen(m), "\x1b[7;4mrefund\x1b[m") {
		t.Errorf("the current match is not highlighted:\n%q", screen(m))
	}
	keys(m, "n")
	if !strings.Contains(title(), "match 2/4") {
		t.Errorf("n: %q", title())
	}
	// The second match is far below the first screen: the view scrolled to it.
	if !strings.Contains(plainScreen(m), "Still no refund") {
		t.Errorf("n didn't bring the match into view:\n%s", plainScreen(m))
	}
	keys(m, "n", "n", "n")
	if !strings.Contains(title(), "match 1/4") {
		t.Errorf("n past the last match wraps to the first: %q", title())
	}
	keys(m, "N")
	if !strings.Contains(title(), "match 4/4") {
		t.Errorf("N before the first match wraps to the last: %q", title())
	}
	// A capital: that case only.
	keys(m, "/")
	typeText(m, "Refund")
	if got := len(m.detail.search.hits); got != 1 {
		t.Errorf("Refund: %d matches, want 1", got)
	}
	keys(m, "esc")
	if m.detail.search.query != "" || strings.Contains(title(), "match") {
		t.Errorf("esc in the prompt keeps the search: %q", title())
	}
	if m.detail == nil {
		t.Fatal("esc in the prompt closed the detail view")
	}
	// No match says so.
	keys(m, "/")
	typeText(m, "zebra")
	keys(m, "enter")
	if !strings.Contains(title(), "no match for zebra") {
		t.Errorf("no match: %q", title())
	}
	id := m.detail.rec.ID
	keys(m, "J")
	if m.detail.rec.ID == id {
		t.Error("J doesn't go to the next row")
	}
	if m.detail.search.query != "zebra" {
		t.Errorf("the search doesn't go on in the next row: %q", m.detail.search.query)
	}
}

// On a TERM=dumb terminal the matches take no escapes: a line holding one starts with "/".
func TestPagerSearchDumb(t *testing.T) {
	m := newLoaded(t, searchWorkbook(t), 100, 30, func(o *Options) { o.Environ = []string{"TERM=dumb"} })
	keys(m, "enter", "/")
	typeText(m, "refund")
	keys(m, "enter")
	out := screen(m)
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("escape sequences on a dumb terminal:\n%q", out)
	}
	found := false
	for _, l := range strings.Split(ansi.Strip(out), "\n") {
		if strings.HasPrefix(l, "/") && strings.Contains(l, "refund") {
			found = true
		}
	}
	if !found {
		t.Errorf("no line marked with / holds the match:\n%s", out)
	}
}
