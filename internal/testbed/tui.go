package testbed

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TermOptions are a teatest program's terminal: w×h, true colour, TERM=xterm-256color, and
// env added to its environment.
func TermOptions(w, h int, env ...string) []teatest.TestOption {
	return []teatest.TestOption{
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(
			tea.WithColorProfile(colorprofile.TrueColor),
			tea.WithEnvironment(append([]string{"TERM=xterm-256color"}, env...)),
		),
	}
}

// Program is a bubbletea program under teatest whose model a test can look at from inside
// Update, on the program's goroutine (no data race), instead of matching the output stream,
// which the cell-diffing renderer sends as fragments: Screen reads the whole screen
// (View().Content), whatever bytes were actually sent.
type Program struct {
	*teatest.TestModel
	t testing.TB
}

// StartProgram runs m on a w×h terminal (TermOptions) until the test ends.
func StartProgram(t testing.TB, m tea.Model, w, h int, env ...string) *Program {
	t.Helper()
	return &Program{TestModel: teatest.NewTestModel(t, probed{m}, TermOptions(w, h, env...)...), t: t}
}

// probed wraps the program's model and runs each probeMsg's function on it.
type probed struct{ m tea.Model }

type probeMsg struct {
	f    func(tea.Model)
	done chan struct{}
}

func (p probed) Init() tea.Cmd { return p.m.Init() }

func (p probed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if pm, ok := msg.(probeMsg); ok {
		pm.f(p.m)
		close(pm.done)
		return p, nil
	}
	var cmd tea.Cmd
	p.m, cmd = p.m.Update(msg)
	return p, cmd
}

func (p probed) View() tea.View { return p.m.View() }

// Probe runs f on the model inside the program and reports whether it ran before the test's
// context ended (false: the program quit or hangs).
// Messages sent before it are handled before it runs. Until it returns true, f may still
// run, so the caller must not read what f writes otherwise.
func (p *Program) Probe(f func(tea.Model)) bool {
	done := make(chan struct{})
	p.Send(probeMsg{f: f, done: done})
	select {
	case <-done:
		return true
	case <-p.t.Context().Done():
		return false
	}
}

// Screen is the program's whole screen now, without styling; it fails the test when the
// program doesn't answer (it quit, or hangs).
func (p *Program) Screen(t testing.TB) string {
	t.Helper()
	var s string
	if !p.Probe(func(m tea.Model) { s = ansi.Strip(m.View().Content) }) {
		t.Fatal("the program doesn't answer (did it quit?)")
	}
	return s
}

// WaitScreen waits until the screen shows every one of what, and returns it.
func (p *Program) WaitScreen(t testing.TB, what ...string) string {
	t.Helper()
	return p.waitScreen(t, fmt.Sprintf("%q", what), func(s string) bool {
		for _, w := range what {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

// WaitGone waits until the screen no longer shows s.
func (p *Program) WaitGone(t testing.TB, s string) {
	t.Helper()
	p.waitScreen(t, fmt.Sprintf("%q to go", s), func(screen string) bool { return !strings.Contains(screen, s) })
}

func (p *Program) waitScreen(t testing.TB, what string, cond func(string) bool) string {
	t.Helper()
	var last string
	if !Until(t, func() bool { last = p.Screen(t); return cond(last) }) {
		t.Fatalf("the test ended waiting for %s; the screen:\n%s", what, last)
	}
	return last
}

// Keys presses each key in turn (Press).
func (p *Program) Keys(keys ...string) {
	for _, k := range keys {
		p.Send(Press(k))
	}
}

// Finished waits for the program to end (failing the test after Wait).
func (p *Program) Finished(t testing.TB) {
	t.Helper()
	p.WaitFinished(t, teatest.WithFinalTimeout(Wait))
}

// Press is the key message a terminal sends for a key: a name ("enter", "esc", "space",
// "tab", "shift+tab", "up", "down", "pgup", "pgdown", "backspace", "ctrl+" and a letter) or
// the character itself.
func Press(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	if strings.HasPrefix(k, "ctrl+") {
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}
