package cli

import (
	"strings"
	"testing"
)

func TestArticle(t *testing.T) {
	if article("inbox") != "an" || article("queue") != "a" || article("deadletter") != "a" {
		t.Error("article")
	}
}

// TestCLIShowsZonesAndCompactDurations: list names the zone of its times; requeue-stale says
// how old a claim is in one compact unit, as the TUI does ("2h ago", not "2 h ago" or a Go
// duration), and its threshold exactly and compactly ("3h", "1h30m").
func TestCLIShowsZonesAndCompactDurations(t *testing.T) {
	_, url := startEmu(t, smallWorkbook())
	c := newCLI(t, url)
	r := c.run("--spreadsheet", "s1", "list", "--tab", "Inbox")
	if r.code != 0 || !strings.Contains(r.stdout, " UTC") {
		t.Errorf("list times should name their zone: exit %d\n%s", r.code, r.stdout)
	}
	r = c.run("--spreadsheet", "s1", "requeue-stale", "--tab", "Jobs", "--dry-run", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, "claimed by w1 2h ago") || strings.Contains(r.stdout, "0m0s") {
		t.Errorf("requeue-stale note: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("--spreadsheet", "s1", "requeue-stale", "--tab", "Jobs", "--older-than", "3h")
	if r.code != 0 || !strings.Contains(r.stderr, "no claims older than 3h") {
		t.Errorf("requeue-stale threshold: exit %d\n%s", r.code, r.stderr)
	}
	r = c.run("--spreadsheet", "s1", "requeue-stale", "--tab", "Jobs", "--older-than", "150m")
	if r.code != 0 || !strings.Contains(r.stderr, "no claims older than 2h30m") {
		t.Errorf("requeue-stale threshold: exit %d\n%s", r.code, r.stderr)
	}
}
