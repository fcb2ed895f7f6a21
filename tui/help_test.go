package tui

import (
	"strings"
	"testing"
)

func TestHelpOverlayListsEveryBinding(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "?")
	out := plainScreen(m)
	for _, g := range m.c.keys.fullHelp() {
		if !strings.Contains(out, g.title) {
			t.Errorf("help lacks group %q", g.title)
		}
		for _, e := range g.entries {
			if !strings.Contains(out, e.desc) || !strings.Contains(out, e.key) {
				t.Errorf("help lacks %q (%s) at 80x24:\n%s", e.desc, e.key, out)
			}
		}
		for _, b := range g.bindings {
			if !strings.Contains(out, b.Help().Key) {
				t.Errorf("help lacks the keys %q of %q at 80x24", b.Help().Key, b.Help().Desc)
			}
		}
	}
	keys(m, "esc")
	if m.showHelp {
		t.Error("esc closes help")
	}
}

func TestHelpScrollsWhenTooTall(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 60, 15)
	keys(m, "?")
	seen := map[string]bool{}
	for i := 0; i < 30; i++ {
		for _, l := range strings.Split(plainScreen(m), "\n") {
			seen[strings.TrimSpace(l)] = true
		}
		keys(m, "j")
	}
	all := strings.Join(mapKeys(seen), "\n")
	for _, g := range m.c.keys.fullHelp() {
		for _, b := range g.bindings {
			if !strings.Contains(all, b.Help().Key) {
				t.Errorf("help at 60x15 never shows %q, even scrolled", b.Help().Key)
			}
		}
	}
	keys(m, "k")
	if m.helpOffset <= 0 {
		t.Error("k scrolls back up right away (the offset is clamped, not left past the end)")
	}
}
