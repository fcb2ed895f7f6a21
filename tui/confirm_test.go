package tui

import (
	"fmt"
	"strings"
	"testing"
)

func TestDialogsFitTheBody(t *testing.T) {
	type dialogCase struct {
		name  string
		open  func(m *Model)
		wants []string // always on screen, inside the box
	}
	replayKeys := []string{"y replay", "N no (enter/esc)"}
	dialogs := []dialogCase{
		{"replay confirm", func(m *Model) { keys(m, "2", "A") }, append([]string{"Replay 6 calls", "[y/N]", "d dry run"}, replayKeys...)},
		{"replay dry run", func(m *Model) { keys(m, "2", "A", "d") }, append([]string{"Replay 6 calls", "[y/N]", "d hide dry run"}, replayKeys...)},
		{"replay marked, dry run", func(m *Model) { keys(m, "2", "space", "space", "R", "d") }, append([]string{"Replay 2 calls", "[y/N]"}, replayKeys...)},
		{"requeue", func(m *Model) { keys(m, "3", "Q") }, []string{"Requeue 1 stale claim? [y/N]", "y yes", "N no (enter/esc)"}},
		{"set status confirm", func(m *Model) { keys(m, "space", "space", "space", "s", "4") }, []string{"Set status of 3 rows to done? [y/N]", "y yes", "N no"}},
		{"picker", func(m *Model) { keys(m, "s") }, []string{"Set status of", "esc cancel"}},
	}
	for _, size := range [][2]int{{60, 15}, {80, 24}, {100, 30}} {
		for _, halted := range []bool{false, true} {
			for _, toast := range []bool{false, true} {
				for _, dc := range dialogs {
					name := fmt.Sprintf("%dx%d/halt=%v/toast=%v/%s", size[0], size[1], halted, toast, dc.name)
					t.Run(name, func(t *testing.T) {
						m, _ := newReplayModel(t, newFakeReplayer(), size[0], size[1], func(o *Options) { o.NoColor = true })
						if halted {
							withHalt(m)
						}
						if toast {
							withErrorToast(m)
						}
						dc.open(m)
						if m.dialog == nil {
							t.Fatalf("no dialog:\n%s", plainScreen(m))
						}
						out := plainScreen(m)
						checkFrame(t, out, size[0], size[1])
						box, ok := boxRows(out)
						if !ok {
							t.Fatalf("the box's top or bottom border is off screen:\n%s", out)
						}
						if len(box) > m.geo.bodyH {
							t.Errorf("the box is %d lines, the body %d", len(box), m.geo.bodyH)
						}
						inBox := strings.Join(box, "\n")
						for _, w := range dc.wants {
							if !strings.Contains(inBox, w) {
								t.Errorf("the box lacks %q:\n%s", w, out)
							}
						}
						if halted && !strings.Contains(out, "!! HALTED") {
							t.Errorf("the banner is gone:\n%s", out)
						}
					})
				}
			}
		}
	}
}

// TestDialogScrollsItsMiddle: under the halt banner at 80x24 the dry run doesn't fit; d brings
// it into view, the navigation keys scroll it between the fixed question and keys, and the
// position is shown.
func TestDialogScrollsItsMiddle(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 80, 24, func(o *Options) { o.NoColor = true })
	withHalt(m)
	keys(m, "2", "A")
	keys(m, "d")
	out := plainScreen(m)
	if !strings.Contains(out, "Dry run: nothing is sent") || !strings.Contains(out, "Would send 6 calls:") {
		t.Errorf("d brings the dry run into view:\n%s", out)
	}
	if !strings.Contains(out, "(j/k scroll)") {
		t.Errorf("the position and how to scroll are shown:\n%s", out)
	}
	first := out
	keys(m, "j")
	if plainScreen(m) == first {
		t.Errorf("j scrolls the dry run")
	}
	keys(m, "G")
	out = plainScreen(m)
	if !strings.Contains(out, "row 8: source mailer has no url_prefixes") || !strings.Contains(out, "row 9 is rejected") {
		t.Errorf("G shows the end of the dry run:\n%s", out)
	}
	keys(m, "g")
	out = plainScreen(m)
	if !strings.Contains(out, "All 8 rows of the tab.") {
		t.Errorf("g shows the notes above the dry run:\n%s", out)
	}
	for _, s := range []string{first, out} {
		for _, w := range []string{"Replay 6 calls to 1 source (crm)?", "[y/N]", "y replay · d hide dry run · N no (enter/esc)", "╰"} {
			if !strings.Contains(s, w) {
				t.Errorf("%q is always on screen:\n%s", w, s)
			}
		}
	}
	keys(m, "y")
	if m.replay.run == nil {
		t.Error("y still replays after scrolling")
	}
}

// TestConfirmFitsAnyBody: whatever the body's height, the box is no taller (from 4 lines:
// border, question with its [y/N], keys) and keeps the question's start, [y/N] and the keys.
func TestConfirmFitsAnyBody(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 80, 24, func(o *Options) { o.NoColor = true })
	keys(m, "2", "A", "d")
	d, ok := m.dialog.(confirm)
	if !ok {
		t.Fatalf("no confirm: %T", m.dialog)
	}
	d.dests = []string{"https://crm.example/api/", "https://crm.example/v2/", "https://mail.example/", "https://a.example/", "https://b.example/"}
	for h := 4; h <= 40; h++ {
		m.c.bodyH = h
		box := strings.Split(d.View(), "\n")
		text := strings.Join(box, "\n")
		if len(box) > h {
			t.Errorf("body %d: box of %d lines:\n%s", h, len(box), text)
		}
		for _, w := range []string{"Replay 6 calls", "[y/N]", "y replay", "N no (enter/esc)", "╰"} {
			if !strings.Contains(text, w) {
				t.Errorf("body %d: box lacks %q:\n%s", h, w, text)
			}
		}
	}
}
