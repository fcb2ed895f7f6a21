package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/triage-dev/triage/model"
)

// TestDumbIsASCII: under TERM=dumb every glyph the UI draws itself is ASCII: the progress
// line's dashes, separators, ellipses, the bar, borders, the banner.
func TestDumbIsASCII(t *testing.T) {
	dumb := func(m *Model) {
		send(m, tea.EnvMsg(uv.Environ([]string{"TERM=dumb"})))
		send(m, tea.ColorProfileMsg{Profile: colorprofile.NoTTY})
	}
	nonASCII := func(s string) string {
		var out []string
		for _, r := range s {
			if r > 0x7e || (r < 0x20 && r != '\n') {
				out = append(out, string(r))
			}
		}
		return strings.Join(out, "")
	}
	fr := newFakeReplayer()
	m, _ := newReplayModel(t, fr, 80, 24)
	dumb(m)
	screens := map[string]func(){
		"table":    func() { keys(m, "2") },
		"confirm":  func() { keys(m, "A") },
		"dry run":  func() { keys(m, "d") },
		"scrolled": func() { keys(m, "j", "j") },
		"progress": func() {
			keys(m, "y")
			send(m, replayProgressMsg{id: m.replay.run.id, events: []model.ReplayEvent{{Row: model.RowResult{ID: "k-1", State: "sending"}, Total: 6}}})
		},
		"halt": func() {
			h := demoHalt
			send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Counts: map[model.RowState]int{"systemic": 1}, Halted: &h, NotAttempted: []string{"k-2", "k-3", "k-4", "k-5", "k-6", "k-7"}}})
		},
		"banner":  func() { keys(m, "esc") },
		"detail":  func() { keys(m, "enter") },
		"picker":  func() { keys(m, "esc", "s") },
		"queue":   func() { keys(m, "esc", "3") },
		"requeue": func() { keys(m, "Q") },
		"help":    func() { keys(m, "esc", "?") },
	}
	for _, name := range []string{"table", "confirm", "dry run", "scrolled", "progress", "halt", "banner", "detail", "picker", "queue", "requeue", "help"} {
		screens[name]()
		out := screen(m)
		if bad := nonASCII(out); bad != "" {
			t.Errorf("%s: non-ASCII under TERM=dumb: %q\n%s", name, bad, out)
		}
		if name == "progress" && (!strings.Contains(out, "elapsed 0s") || strings.Contains(out, "- -")) {
			t.Errorf("the progress line in ASCII:\n%s", out)
		}
	}
}

func TestNoColorHasMarkers(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.NoColor = true })
	keys(m, "space", "k")
	out := screen(m)
	if strings.ContainsRune(out, 0x1b) {
		t.Fatal("NO_COLOR output has escape sequences")
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[3], ">*") {
		t.Errorf("cursor and mark are visible without color: %q", lines[3])
	}
	if !strings.Contains(lines[1], "[1 Inbox") {
		t.Errorf("active tab is bracketed: %q", lines[1])
	}
}
