package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Golden screens of View().Content (independent of the terminal, unlike raw program output).
// Rewrite them with: go test ./tui/ -run TestGolden -update
func TestGolden(t *testing.T) {
	dark := func(m *Model) { send(m, tea.BackgroundColorMsg{Color: black{}}) }
	cases := []struct {
		name    string
		w, h    int
		noColor bool
		keys    []string
	}{
		{"inbox_80x24", 80, 24, false, []string{"j", "space", "k"}},
		{"inbox_120x40_preview", 120, 40, false, []string{"j", "j", "j", "space", "p"}},
		{"inbox_80x24_nocolor", 80, 24, true, []string{"j", "space", "k"}},
		{"inbox_80x24_nocolor_preview", 80, 24, true, []string{"j", "j", "j", "p"}},
		{"detail_80x24_nocolor", 80, 24, true, []string{"j", "j", "j", "enter", "j"}},
		{"deadletter_120x40", 120, 40, false, []string{"2", "j", "enter"}},
		{"queue_80x24_nocolor", 80, 24, true, []string{"3", "j"}},
		{"confirm_80x24_nocolor", 80, 24, true, []string{"space", "space", "space", "s", "4"}},
		{"picker_80x24", 80, 24, false, []string{"s"}},
		{"help_80x24_nocolor", 80, 24, true, []string{"?"}},
		{"filter_80x24_nocolor", 80, 24, true, []string{"/", "s", "t", "a", "t", "u", "s", ":", "n", "e", "w"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newLoaded(t, testWorkbook(t), c.w, c.h, func(o *Options) { o.NoColor = c.noColor; o.Banner = "demo" })
			dark(m)
			keys(m, c.keys...)
			got := screen(m)
			checkFrame(t, got, c.w, c.h)
			checkGolden(t, c.name, got)
		})
	}
}

// black is a dark terminal background.
type black struct{}

func (black) RGBA() (r, g, b, a uint32) { return 0, 0, 0, 0xffff }
