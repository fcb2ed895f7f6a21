package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The `?` screen of each tab lists every binding that works there, whole at 80x24; together
// the three tabs list every binding of the table.
func TestHelpOverlayListsEveryBinding(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	listed := map[string]bool{}
	for _, tab := range []string{"1", "2", "3"} {
		keys(m, tab, "?")
		// At 80x24 the help scrolls to its last groups (the dialogs', the filter prompt's):
		// read every screen of it.
		out := plainScreen(m)
		for range 60 {
			keys(m, "j")
			out += plainScreen(m)
		}
		role := m.tabs.current().cfg.Role
		if !strings.Contains(out, "Keys on "+m.tabs.current().name()) {
			t.Errorf("%s: the help says which tab it is for:\n%s", role, out)
		}
		for _, g := range m.c.keys.tableHelp(role) {
			if !strings.Contains(out, g.title) {
				t.Errorf("%s: help lacks group %q", role, g.title)
			}
			for _, e := range g.entries {
				if !strings.Contains(out, e.desc) || !strings.Contains(out, e.key) {
					t.Errorf("%s: help lacks %q (%s) at 80x24:\n%s", role, e.desc, e.key, out)
				}
			}
			for _, b := range g.bindings {
				if !strings.Contains(out, b.Help().Key) {
					t.Errorf("%s: help lacks the keys %q of %q at 80x24", role, b.Help().Key, b.Help().Desc)
				}
				listed[b.Help().Desc] = true
			}
		}
		keys(m, "esc")
		if m.help.open {
			t.Error("esc closes help")
		}
	}
	for _, g := range m.c.keys.fullHelp() {
		for _, b := range g.bindings {
			if !listed[b.Help().Desc] {
				t.Errorf("no tab's help lists %q", b.Help().Desc)
			}
		}
	}
	// A tab's help leaves out the other tabs' actions.
	keys(m, "1", "?")
	if out := plainScreen(m); strings.Contains(out, "replay all shown") || strings.Contains(out, "requeue stale claims") {
		t.Errorf("the inbox's help lists dead-letter and queue actions:\n%s", out)
	}
}

func TestHelpScrollsWhenTooTall(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 60, 15)
	keys(m, "?")
	seen := map[string]bool{}
	for i := 0; i < 60; i++ {
		for _, l := range strings.Split(plainScreen(m), "\n") {
			seen[strings.TrimSpace(l)] = true
		}
		keys(m, "j")
	}
	all := strings.Join(mapKeys(seen), "\n")
	for _, g := range m.c.keys.tableHelp(m.tabs.current().cfg.Role) {
		for _, b := range g.bindings {
			if !strings.Contains(all, b.Help().Key) {
				t.Errorf("help at 60x15 never shows %q, even scrolled", b.Help().Key)
			}
		}
	}
	keys(m, "k")
	if m.help.offset <= 0 {
		t.Error("k scrolls back up right away (the offset is clamped, not left past the end)")
	}
}

// A read-only session's footer spends its room on what the person can do: no write hints.
func TestReadOnlyFooterHasNoWriteHints(t *testing.T) {
	for _, tab := range []string{"1", "2", "3"} {
		m := newLoaded(t, testWorkbook(t), 120, 30, func(o *Options) { o.Store = nopStore{t: t, readOnly: true} })
		keys(m, tab)
		foot := ansi.Strip(shortHelpLine(m, 120))
		for _, w := range []string{"s status", "u undo", "R replay", "e clear error", "D discard", "Q requeue"} {
			if strings.Contains(foot, w) {
				t.Errorf("tab %s: the read-only footer offers %q: %q", tab, w, foot)
			}
		}
		if !strings.Contains(foot, "? help") || !strings.Contains(foot, "/ filter") {
			t.Errorf("tab %s: footer %q", tab, foot)
		}
	}
}

// A read-only session's `?` lists what the person can do: no write or replay keys.
func TestReadOnlyHelpHasNoWriteKeys(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 40, func(o *Options) { o.Store = nopStore{t: t, readOnly: true} })
	keys(m, "2", "?")
	out := plainScreen(m)
	for _, w := range []string{"set status", "replay all shown", "discard dead letter", "undo last change"} {
		if strings.Contains(out, w) {
			t.Errorf("the read-only help lists %q:\n%s", w, out)
		}
	}
	if !strings.Contains(out, "filter") || !strings.Contains(out, "copy ID") {
		t.Errorf("the read-only help lost what a viewer can do:\n%s", out)
	}
}
