package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// confirm asks yes/no before a bulk write, a replay or quitting mid-run. The default is No:
// enter, esc, n and q all cancel; only y goes ahead, so a stray enter can't change 37 rows.
//
// It can carry a list (the rows a requeue touches, a replay's dry run) shown below the
// question, scrolled with the navigation keys; with listToggle, d or tab shows and hides it.
type confirm struct {
	c        *common
	question string
	notes    []string
	yes      action // what y does; nil: nothing to confirm, the dialog only informs
	yesLabel string
	// targets are lines under the question naming where it goes ("  to https://crm/api/");
	// with them, [y/N] gets a line of its own after the last one.
	targets []string

	list       []string // raw lines, sanitised and wrapped when drawn
	listTitle  string
	listToggle bool
	showList   bool
	offset     int
	wrapped    *wrapCache
}

// wrapCache keeps the wrapped list for one width: a dry run of 2,000 calls is wrapped once,
// not per frame.
type wrapCache struct {
	w     int
	lines []string
}

func newConfirm(c *common, question string, notes []string, op writeOp) confirm {
	return confirm{c: c, question: question, notes: notes, yes: confirmAction{op: op}, yesLabel: "yes", wrapped: &wrapCache{}}
}

// Update answers the dialog or scrolls its list.
func (d confirm) Update(msg tea.Msg) (dialog, action) {
	if wm, ok := msg.(tea.MouseWheelMsg); ok && d.showList {
		switch wm.Button {
		case tea.MouseWheelDown:
			d.offset += 3
		case tea.MouseWheelUp:
			d.offset = max(0, d.offset-3)
		}
		return d, nil
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return d, nil
	}
	k := d.c.keys
	switch km.String() {
	case "y", "Y":
		if d.yes == nil {
			return d, nil
		}
		return d, d.yes
	case "n", "N", "enter", "esc", "q", "ctrl+c":
		return d, closeAction{}
	case "d", "tab":
		if d.listToggle {
			d.showList = !d.showList
			d.offset = 0
		}
		return d, nil
	}
	if d.showList && len(d.list) > 0 {
		page := max(1, d.listHeight()-1)
		switch {
		case key.Matches(km, k.Down):
			d.offset++
		case key.Matches(km, k.Up):
			d.offset = max(0, d.offset-1)
		case key.Matches(km, k.PageDown, k.HalfDown):
			d.offset += page
		case key.Matches(km, k.PageUp, k.HalfUp):
			d.offset = max(0, d.offset-page)
		case key.Matches(km, k.Top):
			d.offset = 0
		case key.Matches(km, k.Bottom):
			d.offset = len(d.wrappedList())
		}
		d.offset = max(0, min(d.offset, len(d.wrappedList())-d.listHeight()))
	}
	return d, nil
}

// width is the box's inner width.
func (d confirm) width() int {
	if len(d.list) > 0 {
		return min(76, max(30, d.c.width-8))
	}
	return min(64, max(30, d.c.width-8))
}

func (d confirm) head() []string {
	w := d.width()
	var out []string
	q := cellLine(d.question)
	if d.yes != nil && len(d.targets) == 0 {
		q += " [y/N]"
	}
	for _, l := range wrapText(q, w) {
		out = append(out, "Q"+l)
	}
	for _, t := range d.targets {
		indent := len(t) - len(strings.TrimLeft(t, " "))
		for i, l := range wrapText(model.SanitizeLine(strings.TrimLeft(t, " ")), max(10, w-indent-3)) {
			pad := indent
			if i > 0 {
				pad += 3 // under the URL, past "to "
			}
			out = append(out, "T"+strings.Repeat(" ", pad)+l)
		}
	}
	if d.yes != nil && len(d.targets) > 0 {
		out = append(out, "Q[y/N]")
	}
	for _, n := range d.notes {
		for _, l := range wrapText(cellLine(n), w) {
			out = append(out, "N"+l)
		}
	}
	return out
}

// listHeight is how many list lines fit: the body less the border, the head and the keys.
func (d confirm) listHeight() int {
	avail := d.c.bodyH - 2 - 2 // border, blank + keys
	if avail <= 0 {
		avail = d.c.height - 8
	}
	return max(3, avail-len(d.head())-2) // blank + list title
}

func (d confirm) wrappedList() []string {
	w := d.width() - 2
	if d.wrapped == nil {
		d.wrapped = &wrapCache{}
	}
	if d.wrapped.lines == nil || d.wrapped.w != w {
		var out []string
		for _, l := range d.list {
			indent := len(l) - len(strings.TrimLeft(l, " "))
			ws := wrapText(model.SanitizeLine(strings.TrimLeft(l, " ")), max(10, w-indent))
			if len(ws) == 0 {
				out = append(out, "")
			}
			for i, x := range ws {
				pad := indent
				if i > 0 {
					pad += 2
				}
				out = append(out, strings.Repeat(" ", pad)+x)
			}
		}
		d.wrapped.w, d.wrapped.lines = w, out
	}
	return d.wrapped.lines
}

// View is the confirmation box.
func (d confirm) View() string {
	st := d.c.styles
	w := d.width()
	var b strings.Builder
	for _, l := range d.head() {
		switch l[0] {
		case 'Q':
			b.WriteString(st.paint(st.DialogDanger, l[1:]))
		case 'T':
			b.WriteString(l[1:])
		default:
			b.WriteString(st.paint(st.Muted, l[1:]))
		}
		b.WriteByte('\n')
	}
	if d.showList && len(d.list) > 0 {
		lines := d.wrappedList()
		h := d.listHeight()
		off := max(0, min(d.offset, len(lines)-h))
		end := min(len(lines), off+h)
		b.WriteString("\n")
		title := d.listTitle
		if len(lines) > h {
			title += fmt.Sprintf(" · %d-%d of %d lines", off+1, end, len(lines))
			if sh := d.c.keys.scrollHint(); sh != "" {
				title += " (" + sh + " scroll)"
			}
		}
		b.WriteString(st.paint(st.DialogTitle, truncate(title, w)))
		b.WriteByte('\n')
		for _, l := range lines[off:end] {
			b.WriteString(fit(l, w))
			b.WriteByte('\n')
		}
	}
	b.WriteString("\n")
	var keys []string
	if d.yes != nil {
		keys = append(keys, st.paint(st.Bold, "y")+" "+d.yesLabel)
	}
	if d.listToggle && len(d.list) > 0 {
		if d.showList {
			keys = append(keys, st.paint(st.Bold, "d")+" hide dry run")
		} else {
			keys = append(keys, st.paint(st.Bold, "d")+" dry run")
		}
	}
	if d.yes != nil {
		keys = append(keys, st.paint(st.Bold, "N")+" no (enter/esc)")
	} else {
		keys = append(keys, st.paint(st.Bold, "esc")+" close")
	}
	b.WriteString(strings.Join(keys, " · "))
	return st.DialogBox.Render(b.String())
}

// writeOp is the write a yes sends, if the dialog confirms one.
func (d confirm) writeOp() writeOp {
	if a, ok := d.yes.(confirmAction); ok {
		return a.op
	}
	return writeOp{}
}
