package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// confirm asks yes/no before a bulk write. The default is No: enter, esc, n and q all
// cancel; only y goes ahead, so a stray enter can't change 37 rows.
type confirm struct {
	c        *common
	question string
	notes    []string
	op       writeOp
}

func newConfirm(c *common, question string, notes []string, op writeOp) confirm {
	return confirm{c: c, question: question, notes: notes, op: op}
}

// Update answers the dialog.
func (d confirm) Update(msg tea.Msg) (dialog, action) {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return d, nil
	}
	switch km.String() {
	case "y", "Y":
		return d, confirmAction{op: d.op}
	case "n", "N", "enter", "esc", "q", "ctrl+c":
		return d, closeAction{}
	}
	return d, nil
}

// View is the confirmation box.
func (d confirm) View() string {
	st := d.c.styles
	w := min(64, max(30, d.c.width-8))
	var b strings.Builder
	for _, l := range wrapText(cellLine(d.question)+" [y/N]", w) {
		b.WriteString(st.paint(st.DialogDanger, l))
		b.WriteByte('\n')
	}
	for _, n := range d.notes {
		for _, l := range wrapText(cellLine(n), w) {
			b.WriteString(st.paint(st.Muted, l))
			b.WriteByte('\n')
		}
	}
	b.WriteString("\n")
	b.WriteString(st.paint(st.Bold, "y") + " yes · " + st.paint(st.Bold, "N") + " no (enter/esc)")
	return st.DialogBox.Render(b.String())
}
