package tui

import "testing"

func TestLayoutFits(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 15}, {100, 30}, {200, 50}} {
		for _, noColor := range []bool{false, true} {
			m := newLoaded(t, testWorkbook(t), size[0], size[1], func(o *Options) { o.NoColor = noColor })
			for _, step := range [][]string{nil, {"j", "j", "j", "j", "j", "j", "j"}, {"p"}, {"enter"}, {"esc", "2", "s"}, {"esc", "3", "?"}, {"esc", "1", "/", "a"}} {
				keys(m, step...)
				checkFrame(t, screen(m), size[0], size[1])
			}
		}
	}
}
