package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// pickerLabels are the quick-choice keys of picker rows: digits, then letters that aren't
// navigation keys (g, j, k, q mean move/quit here).
const pickerLabels = "123456789abcdefhilmnoprstuvwxyz"

// picker chooses one status from a table's status list.
type picker struct {
	c       *common
	title   string
	options []string
	current string // the status all targets share, if they do; marked in the list
	cursor  int
}

func newPicker(c *common, title string, options []string, current string) picker {
	p := picker{c: c, title: title, options: options, current: current}
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
	case km.String() == "esc" || km.String() == "ctrl+c" || key.Matches(km, k.Quit, k.Clear):
		return p, closeAction{}
	case km.String() == "enter":
		if len(p.options) == 0 {
			return p, closeAction{}
		}
		return p, pickStatusAction{status: p.options[p.cursor]}
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
			if i := strings.Index(pickerLabels, s); i >= 0 && i < len(p.options) {
				return p, pickStatusAction{status: p.options[i]}
			}
		}
	}
	return p, nil
}

// View is the picker box.
func (p picker) View() string {
	st := p.c.styles
	var b strings.Builder
	b.WriteString(st.paint(st.DialogTitle, cellLine(p.title)))
	b.WriteString("\n\n")
	for i, o := range p.options {
		label := "  "
		if i < len(pickerLabels) {
			label = pickerLabels[i:i+1] + " "
		}
		line := label + cellLine(o)
		if o == p.current {
			line += " (current)"
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
	b.WriteString("\n")
	b.WriteString(st.paint(st.Muted, "key or "+firstKey(p.c.keys.Up)+firstKey(p.c.keys.Down)+" enter · esc cancel"))
	return st.DialogBox.Render(b.String())
}
