package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/triage-dev/triage/model"
)

func TestHaltBannerWrapsWholeAndLoud(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, tea.BackgroundColorMsg{Color: black{}})
	withHalt(m)
	lines := m.replay.bannerLines(80, m.tabs.activeName())
	if len(lines) < 2 || len(lines) > bannerMaxLines {
		t.Fatalf("banner of %d lines", len(lines))
	}
	var text []string
	for _, l := range lines {
		if !sgrAny.MatchString(l) {
			t.Errorf("every banner line is loud (styled): %q", l)
		}
		text = append(text, strings.TrimSpace(ansi.Strip(l)))
	}
	joined := strings.Join(text, " ")
	if !strings.Contains(joined, "export it and run again") || strings.Contains(joined, "…") {
		t.Errorf("the banner keeps the whole cause and fix: %q", joined)
	}
	if out := plainScreen(m); !strings.Contains(out, "DEMO_BILLING_TOKEN, which is not set: export it and run") {
		t.Errorf("the banner is on screen:\n%s", out)
	}

	// Longer than three lines: cut at the third, and says so.
	h := demoHalt
	h.Detail = strings.Repeat("a very long explanation of what went wrong ", 10)
	m.replay.halt = &h
	lines = m.replay.bannerLines(80, m.tabs.activeName())
	if len(lines) != bannerMaxLines || !strings.Contains(ansi.Strip(lines[bannerMaxLines-1]), "…") {
		t.Errorf("a banner past %d lines is cut there with …: %q", bannerMaxLines, lines)
	}
}

func TestReplayHaltBannerStaysUntilDismissed(t *testing.T) {
	fr := newFakeReplayer()
	halt := &model.Halt{Cause: "systemic", Source: "crm", Detail: "401 from crm: check the CRM_TOKEN secret"}
	fr.events = []model.ReplayEvent{{Row: model.RowResult{ID: "k-1", State: "systemic"}, Done: 1, Total: 1, Halted: halt}}
	fr.report = model.ReplaySummary{Counts: map[model.RowState]int{"systemic": 1}, Halted: halt, Rows: []model.RowResult{{ID: "k-1", State: "systemic"}}}
	close(fr.release)
	m, _ := newReplayModel(t, fr, 80, 24, func(o *Options) { o.NoColor = true })
	p := newPump(t, m)
	p.keys("2", "R", "y")
	p.until("the halt", func() bool { return m.replay.run != nil && m.replay.run.finished })
	want := "!! HALTED: systemic — 401 from crm: check the CRM_TOKEN secret"
	if !strings.Contains(plainScreen(m), want) {
		t.Fatalf("halt banner missing:\n%s", plainScreen(m))
	}
	p.keys("esc") // closes the run view
	p.keys("j", "enter", "esc", "1", "2")
	if !strings.Contains(plainScreen(m), want) {
		t.Errorf("the banner stays on every view until dismissed:\n%s", plainScreen(m))
	}
	checkFrame(t, screen(m), 80, 24)
	p.keys("esc")
	if m.replay.halt != nil || strings.Contains(plainScreen(m), "HALTED") {
		t.Errorf("esc in the table dismisses the banner:\n%s", plainScreen(m))
	}
}
