package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// pickerCandidates are the quick-choice keys a picker's rows may get, in order: digits, then
// letters.
const pickerCandidates = "123456789abcdefghijklmnopqrstuvwxyz"

// pickerLabels are the quick-choice keys of a picker's rows: pickerCandidates less every key
// bound to something the picker does (by default g, j, k and q move or quit here), so the
// KeyMap decides them too: a key rebound to move in the picker is never also a row's label.
func (k *KeyMap) pickerLabels() string {
	var b strings.Builder
	for _, r := range pickerCandidates {
		if !bound(string(r), k.Up, k.Down, k.Top, k.Bottom, k.PickerChoose, k.Back, k.Clear, k.Quit, k.Interrupt, k.Suspend) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bound reports whether key name is one of the keys of bs.
func bound(name string, bs ...key.Binding) bool {
	for _, b := range bs {
		if b.Enabled() && slices.Contains(b.Keys(), name) {
			return true
		}
	}
	return false
}

// pickStatusAction: the user chose a status in the picker.
type pickStatusAction struct{ status string }

func (pickStatusAction) isAction() {}

// picker chooses one status from a table's status list. Like every dialog it fits the body:
// with more statuses than lines, the list scrolls with the cursor, and the title and the key
// line stay.
type picker struct {
	c       *common
	title   string
	options []string
	current string // the status all targets share, if they do; marked in the list
	tag     string // how the current option is marked ("" = "(current)")
	// pick is what choosing an option asks of the app; nil: set that status.
	pick   func(option string) action
	cursor int
	offset int    // first option shown, when they don't all fit
	labels string // the rows' quick-choice keys (KeyMap.pickerLabels)
}

func newPicker(c *common, title string, options []string, current string) picker {
	p := picker{c: c, title: title, options: options, current: current, labels: c.keys.pickerLabels()}
	for i, o := range options {
		if strings.EqualFold(o, current) {
			p.cursor = i
		}
	}
	return p
}

// Update moves the selection or returns the chosen status (digit/letter or enter).
func (p picker) Update(msg tea.Msg) (dialog, action) {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	k := p.c.keys
	switch {
	case key.Matches(km, k.Back, k.Quit, k.Clear):
		return p, closeAction{}
	case key.Matches(km, k.PickerChoose):
		if len(p.options) == 0 {
			return p, closeAction{}
		}
		return p, p.choose(p.options[p.cursor])
	case key.Matches(km, k.Up):
		p.cursor = max(0, p.cursor-1)
	case key.Matches(km, k.Down):
		p.cursor = min(len(p.options)-1, p.cursor+1)
	case key.Matches(km, k.Top):
		p.cursor = 0
	case key.Matches(km, k.Bottom):
		p.cursor = len(p.options) - 1
	default:
		if s := km.String(); len(s) == 1 {
			if i := strings.Index(p.labels, s); i >= 0 && i < len(p.options) {
				return p, p.choose(p.options[i])
			}
		}
	}
	p.offset = p.window(p.layout())
	return p, nil
}

// choose is the action for a chosen option.
func (p picker) choose(o string) action {
	if p.pick != nil {
		return p.pick(o)
	}
	return pickStatusAction{status: o}
}

// pickerLayout is how the picker fits the body: how many options show, and whether the
// blank lines around them do.
type pickerLayout struct {
	rows   int
	blanks bool
}

// layout fits the picker into the body: its title and key line always, the blank lines
// around the options while there is room, then as many options as fit.
func (p picker) layout() pickerLayout {
	h := p.c.bodyH
	if h <= 0 {
		h = p.c.height - 6
	}
	inner := max(1, h-2) // the border
	n := len(p.options)
	if n+4 <= inner {
		return pickerLayout{rows: n, blanks: true}
	}
	if inner-4 >= min(n, 3) {
		return pickerLayout{rows: inner - 4, blanks: true}
	}
	return pickerLayout{rows: max(1, min(n, inner-2))}
}

// window is the first option shown: the previous one, moved just enough to show the cursor.
func (p picker) window(l pickerLayout) int {
	off := p.offset
	if p.cursor < off {
		off = p.cursor
	}
	if p.cursor >= off+l.rows {
		off = p.cursor - l.rows + 1
	}
	return max(0, min(off, len(p.options)-l.rows))
}

// hint is the key line.
func (p picker) hint() string {
	k := p.c.keys
	return withHint(withHint("key or "+firstKey(k.Up)+firstKey(k.Down), " ", firstKey(k.PickerChoose)), " · ", keySays(k.Back, "cancel"))
}

// width is the box's inner width: room for the options, the title and the key line, within
// the screen.
func (p picker) width() int {
	return min(p.c.width-8, max(26, textWidth(p.hint()), textWidth(cellLine(p.title))))
}

// View is the picker box.
func (p picker) View() string {
	st := p.c.styles
	l := p.layout()
	off := p.window(l)
	w := p.width()
	var b strings.Builder
	b.WriteString(st.paint(st.DialogTitle, truncate(cellLine(p.title), w)))
	b.WriteString("\n")
	if l.blanks {
		b.WriteString("\n")
	}
	for i := off; i < len(p.options) && i < off+l.rows; i++ {
		o := p.options[i]
		label := "  "
		if i < len(p.labels) {
			label = p.labels[i:i+1] + " "
		}
		line := label + cellLine(o)
		if o == p.current {
			line += " " + cmp.Or(p.tag, "(current)")
		}
		line = fit(line, 24)
		if i == p.cursor {
			if st.NoColor {
				line = "> " + line
			} else {
				line = "  " + st.DialogSelected.Render(line)
			}
		} else {
			line = "  " + st.paint(st.DialogItem, line)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if l.blanks {
		if l.rows < len(p.options) {
			// Where the window is (the key line says how to move).
			b.WriteString(st.paint(st.Muted, fmt.Sprintf("  %d-%d of %d", off+1, min(len(p.options), off+l.rows), len(p.options))))
		}
		b.WriteString("\n")
	}
	b.WriteString(st.paint(st.Muted, truncate(p.hint(), w)))
	return st.DialogBox.Render(b.String())
}
