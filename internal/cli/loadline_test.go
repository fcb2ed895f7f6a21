package cli

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The TUI's first load is shown on stderr as it runs, redrawn in place, the newest figures
// only, hostile tab names sanitised, and wiped at the end so the TUI starts on a clean line.
func TestLoadLineShowsTheLoadAndWipesItself(t *testing.T) {
	var out strings.Builder
	w := &safeWriter{w: &out}
	tick := make(chan time.Time)
	stopped := false
	l := startLoadLine(w, tick, func() { stopped = true })
	tick <- time.Time{} // nothing reported yet: nothing drawn
	l.report("Inbox", 4096, 100_000)
	l.report("Inbox", 40_000, 100_000)
	tick <- time.Time{}
	tick <- time.Time{}                        // received once the draw before it is done; unchanged: not drawn again
	l.report("In\x1b[2Jbox", 100_001, 100_000) // the grid was smaller than the data: no "of"
	tick <- time.Time{}
	tick <- time.Time{}
	l.finish()
	got := out.String()
	want := "\rreading Inbox: 40,000 of 100,000 rows" + "\rreading In␛[2Jbox: 100,001 rows"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("output %q, want it to start %q", got, want)
	}
	if strings.Contains(got, "4,096") || strings.ContainsRune(got, 0x1b) {
		t.Errorf("output %q: a stale figure or an escape", got)
	}
	if strings.Count(got, "reading") != 2 {
		t.Errorf("output %q: want two draws (an unchanged figure is not drawn again)", got)
	}
	if !strings.HasSuffix(got, "\r"+strings.Repeat(" ", utf8.RuneCountInString("reading In␛[2Jbox: 100,001 rows"))+"\r") {
		t.Errorf("output %q: the line is not wiped at the end", got)
	}
	if !stopped {
		t.Error("the ticker was not stopped")
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100_000: "100,000", 1_234_567: "1,234,567", -1200: "-1,200"} {
		if got := humanInt(n); got != want {
			t.Errorf("humanInt(%d) = %q, want %q", n, got, want)
		}
	}
}
