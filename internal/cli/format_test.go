package cli

import (
	"strings"
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                               "0 s",
		45 * time.Second:                "45 s",
		30 * time.Minute:                "30 min",
		100 * time.Minute:               "1 h 40 min",
		time.Hour:                       "1 h",
		-time.Hour:                      "1 h",
		47*time.Hour + 59*time.Minute:   "47 h 59 min",
		51 * time.Hour:                  "2 d 3 h",
		72 * time.Hour:                  "3 d",
		90*time.Minute + 29*time.Second: "1 h 30 min",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
	if article("inbox") != "an" || article("queue") != "a" || article("deadletter") != "a" {
		t.Error("article")
	}
}

// TestCLIShowsZonesAndHumanDurations: list names the zone of its times; requeue-stale says
// how old a claim is the way a person would, not as a Go duration.
func TestCLIShowsZonesAndHumanDurations(t *testing.T) {
	_, url := startEmu(t, smallWorkbook())
	c := newCLI(t, url)
	r := c.run("--spreadsheet", "s1", "list", "--tab", "Inbox")
	if r.code != 0 || !strings.Contains(r.stdout, " UTC") {
		t.Errorf("list times should name their zone: exit %d\n%s", r.code, r.stdout)
	}
	r = c.run("--spreadsheet", "s1", "requeue-stale", "--tab", "Jobs", "--dry-run", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, "claimed by w1 2 h ago") || strings.Contains(r.stdout, "0m0s") {
		t.Errorf("requeue-stale note: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("--spreadsheet", "s1", "requeue-stale", "--tab", "Jobs", "--older-than", "3h")
	if r.code != 0 || !strings.Contains(r.stderr, "no claims older than 3 h") {
		t.Errorf("requeue-stale threshold: exit %d\n%s", r.code, r.stderr)
	}
}
