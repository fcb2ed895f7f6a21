package tui

import (
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// lineInput is the filter prompt's one-line editor. bubbles/textinput would do, but it pulls a
// system-clipboard module into the build for a feature (ctrl+v from the OS clipboard) that
// can't work over SSH anyway; terminal paste arrives as tea.PasteMsg and is handled here.
// It draws no cursor itself: the root View places the terminal's real cursor.
type lineInput struct {
	c     *common // the input keys (c.keys)
	value []rune
	pos   int // cursor, in runes
}

// newLineInput is an empty line edited with c's keys.
func newLineInput(c *common) lineInput { return lineInput{c: c} }

func (in *lineInput) Value() string { return string(in.value) }

// SetValue replaces the text and puts the cursor at the end.
func (in *lineInput) SetValue(s string) {
	in.value = []rune(s)
	in.pos = len(in.value)
}

// insert adds text at the cursor. Control and format characters (bidi overrides among them)
// are dropped: the value is a query, and it is drawn on the terminal.
func (in *lineInput) insert(s string) {
	var add []rune
	for _, r := range s {
		if r == '\n' || r == '\t' {
			r = ' '
		}
		if unicode.IsControl(r) || (unicode.Is(unicode.Cf, r) && r != 0x200d) {
			continue
		}
		add = append(add, r)
	}
	if len(add) == 0 {
		return
	}
	v := make([]rune, 0, len(in.value)+len(add))
	v = append(v, in.value[:in.pos]...)
	v = append(v, add...)
	v = append(v, in.value[in.pos:]...)
	in.value = v
	in.pos += len(add)
}

// Update edits the line with the input keys (emacs-style by default, as readline and most
// prompts have them); other keys type their text. It has no action for its parent (nil):
// the parent reads the text (Value).
func (in lineInput) Update(msg tea.Msg) (lineInput, action) {
	k := in.c.keys
	switch msg := msg.(type) {
	case tea.PasteMsg:
		in.insert(msg.Content)
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.InputDeleteBack):
			if in.pos > 0 {
				in.value = append(in.value[:in.pos-1], in.value[in.pos:]...)
				in.pos--
			}
		case key.Matches(msg, k.InputDelete):
			if in.pos < len(in.value) {
				in.value = append(in.value[:in.pos], in.value[in.pos+1:]...)
			}
		case key.Matches(msg, k.InputLeft):
			in.pos = max(0, in.pos-1)
		case key.Matches(msg, k.InputRight):
			in.pos = min(len(in.value), in.pos+1)
		case key.Matches(msg, k.InputHome):
			in.pos = 0
		case key.Matches(msg, k.InputEnd):
			in.pos = len(in.value)
		case key.Matches(msg, k.InputKillBefore):
			in.value = append([]rune(nil), in.value[in.pos:]...)
			in.pos = 0
		case key.Matches(msg, k.InputKillAfter):
			in.value = in.value[:in.pos]
		case key.Matches(msg, k.InputDeleteWord):
			i := in.pos
			for i > 0 && in.value[i-1] == ' ' {
				i--
			}
			for i > 0 && in.value[i-1] != ' ' {
				i--
			}
			in.value = append(in.value[:i], in.value[in.pos:]...)
			in.pos = i
		default:
			if msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
				in.insert(msg.Text)
			}
		}
	}
	return in, nil
}

// withCursor is View with the cursor drawn as the glyph cursor at its column, for a prompt
// the terminal's own cursor doesn't mark.
func (in *lineInput) withCursor(w int, cursor string) string {
	text, x := in.View(w)
	return ansi.Cut(text, 0, x) + cursor + ansi.Cut(text, x, w)
}

// View renders the line scrolled so the cursor is visible within w cells, and the cursor's
// column in it.
func (in *lineInput) View(w int) (string, int) {
	before := string(in.value[:in.pos])
	after := string(in.value[in.pos:])
	bw := ansi.StringWidth(before)
	if bw >= w {
		// Keep the tail before the cursor on screen.
		before = ansi.TruncateLeft(before, bw-w+1, "…")
		bw = ansi.StringWidth(before)
	}
	// Sanitising is a no-op for what insert lets in; it is here so the prompt is safe even if
	// that ever changes.
	return model.SanitizeLine(truncate(before+after, w)), bw
}
