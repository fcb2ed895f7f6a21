package tui

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/triage-dev/triage/model"
)

// sgrAny matches a Select Graphic Rendition sequence (colors, bold, reverse...). Bubbletea's own
// mode sequences (`ESC[>4m` resets modifyOtherKeys) don't match: they have a `>`.
var sgrAny = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// runProgram runs the TUI on the in-memory workbook as a real program with env, sends keys,
// quits, and returns the raw bytes it wrote and the final model. The color profile is forced
// to TrueColor so that any color the model itself draws would reach the output: what the
// environment asks for must be honoured by the model, not by the renderer's stripping.
func runProgram(t *testing.T, env []string, w, h int, keySeq ...string) ([]byte, *Model) {
	return runProgramUntil(t, env, w, h, nil, keySeq...)
}

// runProgramUntil is runProgram that, after the keys, waits for until in the output (a Cmd's
// effect, such as a clipboard sequence) before quitting.
func runProgramUntil(t *testing.T, env []string, w, h int, until []byte, keySeq ...string) ([]byte, *Model) {
	t.Helper()
	st := &memStore{wb: func() *model.Workbook { return testWorkbook(t) }}
	// As triage and serve do: the environment in the options too, so the first frame draws as
	// it says (bubbletea's EnvMsg comes from a goroutine, after the first frames may be drawn).
	m := New(Options{Store: st, SpreadsheetID: "sheet-1", Now: fixedNow, Environ: env})
	tm := teatest.NewTestModel(t, probed{m}, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor), tea.WithEnvironment(env)))
	waitScreen(t, tm, "Acme contact form")
	waitModel(t, tm, "the environment", func(m *Model) bool { return m.c.term.term != "" })
	for _, k := range keySeq {
		tm.Send(press(k))
	}
	var pre bytes.Buffer
	if until != nil {
		teatest.WaitFor(t, io.TeeReader(tm.Output(), &pre), func(b []byte) bool { return bytes.Contains(b, until) },
			teatest.WithDuration(hangAfter), teatest.WithCheckInterval(5*time.Millisecond))
	}
	tm.Send(press("ctrl+c"))
	fm := finalModel(t, tm)
	out, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(hangAfter)))
	if err != nil {
		t.Fatal(err)
	}
	return append(pre.Bytes(), out...), fm
}

// TestTermDumb: what bubbletea does with TERM=dumb is draw as usual (cursor addressing, the
// alternate screen, mode queries: unavoidable with its renderer), so the model must make the
// content plain: no colors or other SGR styling, no window title, ASCII borders and glyphs,
// the cursor and marks as `>` and `*`. And nothing crashes.
func TestTermDumb(t *testing.T) {
	out, fm := runProgram(t, []string{"TERM=dumb"}, 80, 24, "j", "space", "s", "?")
	if locs := sgrAny.FindAllIndex(out, -1); len(locs) > 0 {
		l := locs[0]
		t.Errorf("TERM=dumb output has %d SGR sequences, first %q in …%q…", len(locs), out[l[0]:l[1]], out[max(0, l[0]-40):min(len(out), l[1]+40)])
	}
	if bytes.Contains(out, []byte("\x1b]2;")) || bytes.Contains(out, []byte("\x1b]0;")) {
		t.Error("TERM=dumb: no window title")
	}
	text := ansi.Strip(string(out))
	for _, r := range []string{"│", "─", "╭", "╰", "…", "●", "·", "✗"} {
		if strings.Contains(text, r) {
			t.Errorf("TERM=dumb output has the non-ASCII glyph %q", r)
		}
	}
	if !strings.Contains(text, "+----") || !strings.Contains(text, "| Set status of") {
		t.Errorf("the picker has an ASCII border:\n%s", text)
	}
	if !fm.c.ascii || !fm.c.styles.NoColor {
		t.Error("TERM=dumb sets the plain ASCII mode")
	}
	screen := fm.View().Content
	if strings.ContainsRune(screen, 0x1b) {
		t.Error("the final frame has escape sequences")
	}
}

// TestNoColorEnv: NO_COLOR (any non-empty value) in the program's environment turns every
// color off, even on a TrueColor terminal, and draws the markers instead.
func TestNoColorEnv(t *testing.T) {
	out, fm := runProgram(t, []string{"TERM=xterm-256color", "NO_COLOR=1"}, 80, 24, "j", "space")
	if locs := sgrAny.FindAllIndex(out, -1); len(locs) > 0 {
		l := locs[0]
		t.Errorf("NO_COLOR output has %d SGR sequences, first %q in …%q…", len(locs), out[l[0]:l[1]], out[max(0, l[0]-40):min(len(out), l[1]+40)])
	}
	if s := fm.View().Content; !strings.Contains(s, "\n * ") || !strings.Contains(s, "\n>  ") {
		t.Errorf("cursor and mark markers without color:\n%s", s)
	}
	// And with color, there is color: the test above can fail.
	out, _ = runProgram(t, []string{"TERM=xterm-256color"}, 80, 24, "j")
	if !sgrAny.Match(out) {
		t.Error("without NO_COLOR the output should have colors")
	}
}

// TestCopyPerTerminal: y copies through OSC 52, wrapped for GNU screen, doubled for tmux
// (plain for set-clipboard, passthrough for allow-passthrough), plain elsewhere, and never
// crashes (dumb).
func TestCopyPerTerminal(t *testing.T) {
	osc := ansi.SetSystemClipboard("msg-000")
	b64 := base64.StdEncoding.EncodeToString([]byte("msg-000"))
	cases := []struct {
		name     string
		env      []string
		want     []string
		dontWant []string
	}{
		{"xterm", []string{"TERM=xterm-256color"}, []string{osc}, []string{"\x1bPtmux;"}},
		{"screen", []string{"TERM=screen"}, []string{"\x1bP" + osc}, []string{"\x1bPtmux;"}},
		{"tmux", []string{"TERM=tmux-256color", "TMUX=/tmp/tmux-1000/default,42,0"}, []string{osc, "\x1bPtmux;\x1b" + osc[:len(osc)-1]}, nil},
		{"tmux-screen", []string{"TERM=screen-256color", "TMUX=/tmp/tmux-1000/default,42,0"}, []string{osc, "\x1bPtmux;"}, nil},
		{"dumb", []string{"TERM=dumb"}, []string{osc}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, fm := runProgramUntil(t, c.env, 80, 24, []byte(b64), "y")
			if !bytes.Contains(out, []byte(b64)) {
				t.Fatalf("no clipboard sequence in the output")
			}
			for _, w := range c.want {
				if !bytes.Contains(out, []byte(w)) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, w := range c.dontWant {
				if bytes.Contains(out, []byte(w)) {
					t.Errorf("output has %q", w)
				}
			}
			if !strings.Contains(plainScreen(fm), "copied ID msg-000") {
				t.Errorf("the toast says what was copied:\n%s", plainScreen(fm))
			}
		})
	}
}

func TestCopyLink(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[1].SheetID = 1234567
	m := newLoaded(t, wb, 100, 30)
	keys(m, "2", "j")
	cmd := send(m, press("o"))
	r, _ := m.tabs.current().current()
	want := "https://docs.google.com/spreadsheets/d/sheet-1/edit#gid=1234567&range=A" + itoa(r.Row)
	if !strings.Contains(plainScreen(m), "copied the sheet link to failed_calls row "+itoa(r.Row)+" (gid=1234567&range=A"+itoa(r.Row)+")") {
		t.Errorf("o copies the row's link and says so:\n%s", plainScreen(m))
	}
	isLink := func(msg tea.Msg) bool {
		return strings.Contains(strings.ToLower(typeName(msg)), "clipboard") && fmt.Sprint(msg) == want
	}
	if !containsMsg(t, cmd, isLink) {
		t.Errorf("o sets the clipboard to %s", want)
	}
	// From the detail view too, and y copies the focused field.
	keys(m, "enter")
	if cmd := send(m, press("o")); !containsMsg(t, cmd, isLink) {
		t.Errorf("o in the detail view copies the same link:\n%s", plainScreen(m))
	}
	keys(m, "j")
	f, _ := m.detail.focused()
	send(m, press("y"))
	if !strings.Contains(plainScreen(m), "copied "+f.label+": ") {
		t.Errorf("y copies the focused field %q:\n%s", f.label, plainScreen(m))
	}
}

func TestMouseOption(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	if m.View().MouseMode != tea.MouseModeNone {
		t.Error("the mouse is off by default (text selection keeps working)")
	}
	m = newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Mouse = true })
	if m.View().MouseMode != tea.MouseModeCellMotion {
		t.Error("Options.Mouse turns wheel reporting on")
	}
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.tabs.current().cursor != 3 {
		t.Errorf("the wheel scrolls: cursor %d", m.tabs.current().cursor)
	}
}

// TestSmallTerminals: every size from tiny to the minimum draws a full frame without panic.
func TestSmallTerminals(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	for _, sz := range [][2]int{{1, 1}, {10, 3}, {50, 12}, {59, 14}, {60, 15}, {61, 40}, {200, 15}} {
		send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFrame(t, screen(m), sz[0], sz[1])
	}
	send(m, tea.WindowSizeMsg{Width: 50, Height: 12})
	if out := plainScreen(m); !strings.Contains(out, "terminal too small") || !strings.Contains(out, "need 60x15, have 50x12") {
		t.Errorf("50x12 says the terminal is too small:\n%s", out)
	}
}

// TestEnvironInOptionsDrawsTheFirstFrame: the environment given in the options decides the
// very first frame, before any tea.EnvMsg: TERM=dumb is plain ASCII from the start.
func TestEnvironInOptionsDrawsTheFirstFrame(t *testing.T) {
	st := &memStore{wb: func() *model.Workbook { return testWorkbook(t) }}
	m := New(Options{Store: st, SpreadsheetID: "sheet-1", Now: fixedNow, Environ: []string{"TERM=dumb"}})
	if !m.c.ascii || !m.c.styles.NoColor {
		t.Fatal("TERM=dumb in Options.Environ: the plain ASCII mode from New on")
	}
	if v := m.View().Content; strings.ContainsRune(v, 0x1b) {
		t.Errorf("the first frame has escape sequences:\n%q", v)
	}
	if m := New(Options{Store: st, SpreadsheetID: "sheet-1", Now: fixedNow}); m.c.ascii {
		t.Error("without an environment the first frame is not plain (the test above can fail)")
	}
}
