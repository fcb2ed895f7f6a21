package tui

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

// The demo's banner is whole when it fits ("nothing leaves this machine" was never seen: it
// was cut to 20 cells at any width), else its head, never cut mid-word; bracketed without
// colour.
func TestBannerWholeOrItsHead(t *testing.T) {
	const banner = "demo: an in-memory workbook; nothing leaves this machine"
	for _, c := range []struct {
		w       int
		noColor bool
		want    string
		not     string
	}{
		{160, false, banner, "…"},
		{160, true, "[" + banner + "]", "…"},
		{80, false, " demo ", "in-memory"},
		{80, true, "[demo]", "in-memory"},
		{60, true, "[demo]", "in-memory"},
	} {
		m := newLoaded(t, testWorkbook(t), c.w, 24, func(o *Options) { o.Banner = banner; o.NoColor = c.noColor })
		head := strings.Split(plainScreen(m), "\n")[0]
		if !strings.Contains(head, c.want) || strings.Contains(head, c.not) {
			t.Errorf("%d cols (no colour %v): header %q, want %q and no %q", c.w, c.noColor, head, c.want, c.not)
		}
	}
}

// The missing-tabs hint fits the status bar whole, in a shorter form when it must.
func TestMissingTabsHintFits(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs = wb.Tabs[:1]
	for _, w := range []int{60, 80, 120} {
		m := newLoaded(t, wb, w, 24)
		m.tabs.missing = []model.TabConfig{model.DefaultTabConfig(model.RoleDeadLetter), model.DefaultTabConfig(model.RoleQueue)}
		bar := statusBar(m, w)
		if !strings.Contains(bar, "triage init") || strings.Contains(bar, "…") {
			t.Errorf("%d cols: the hint is cut or gone: %q", w, bar)
		}
	}
}
