package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// confirm asks yes/no before a bulk write, a replay or quitting mid-run. The default is No:
// enter, esc, n and q all cancel; only y goes ahead, so a stray enter can't change 37 rows.
//
// It can carry a list (the rows a requeue touches, a replay's dry run) shown below the
// question; with listToggle, d or tab shows and hides it.
//
// The box always fits the body (whatever the header, the halt banner and the toasts leave):
// the question, its [y/N] and the key line stay on screen, and the part between them (the
// notes and the list) scrolls with the navigation keys when it doesn't fit, its position
// shown above the key line. Destinations give way first (fewer listed, "… and N more"),
// then the blank line above the keys, then the question's own lines.
type confirm struct {
	c        *common
	question string
	// live, when set, is the question as of now (a count that moves while the dialog is
	// open, like a running replay's progress); question is then its first version.
	live     func() string
	notes    []string
	yes      action // what y does; nil: nothing to confirm, the dialog only informs
	yesLabel string
	// dests are destinations listed under the question ("  to https://crm/api/"), at most
	// destsShown of them and "… and N more"; with them, [y/N] gets a line of its own after
	// the last one, so it doesn't read like a URL ending in a question mark.
	dests []string

	list       []string // raw lines, sanitised and wrapped when drawn
	listTitle  string
	listToggle bool
	showList   bool
	offset     int // scroll of the middle part (notes and list), in lines
	wrapped    *wrapCache
}

// destsShown is how many destinations are listed when there is room: all of them up to one
// more than this, else this many and "… and N more".
const destsShown = 3

// minMiddle is how many lines of the scrolling part (half the box, if that is more) the
// destinations give way to.
const minMiddle = 4

// wrapCache keeps the wrapped list for one width: a dry run of 2,000 calls is wrapped once,
// not per frame.
type wrapCache struct {
	w     int
	lines []string
}

// confirmAction: the user said yes to a write.
type confirmAction struct{ op writeOp }

func (confirmAction) isAction() {}

func newConfirm(c *common, question string, notes []string, op writeOp) confirm {
	return confirm{c: c, question: question, notes: notes, yes: confirmAction{op: op}, yesLabel: "yes", wrapped: &wrapCache{}}
}

// Update answers the dialog or scrolls its middle part.
func (d confirm) Update(msg tea.Msg) (dialog, action) {
	if wm, ok := msg.(tea.MouseWheelMsg); ok {
		switch wm.Button {
		case tea.MouseWheelDown:
			d.offset += 3
		case tea.MouseWheelUp:
			d.offset -= 3
		}
		d.offset = d.layout().clamp(d.offset)
		return d, nil
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return d, nil
	}
	k := d.c.keys
	switch {
	case key.Matches(km, k.ConfirmYes):
		if d.yes == nil {
			return d, nil
		}
		return d, d.yes
	case key.Matches(km, k.ConfirmNo, k.Back):
		return d, closeAction{}
	case key.Matches(km, k.ConfirmList):
		if d.listToggle && len(d.list) > 0 {
			d.showList = !d.showList
			d.offset = 0
			if d.showList {
				// Bring the list into view: it is what d asked for, and in a short body the
				// notes above it could fill the whole window.
				l := d.layout()
				d.offset = l.clamp(l.listAt)
			}
		}
		return d, nil
	}
	l := d.layout()
	if !l.scrolls() {
		return d, nil
	}
	page := max(1, l.midH-1)
	switch {
	case key.Matches(km, k.Down):
		d.offset++
	case key.Matches(km, k.Up):
		d.offset--
	case key.Matches(km, k.PageDown, k.HalfDown):
		d.offset += page
	case key.Matches(km, k.PageUp, k.HalfUp):
		d.offset -= page
	case key.Matches(km, k.Top):
		d.offset = 0
	case key.Matches(km, k.Bottom):
		d.offset = len(l.mid)
	}
	d.offset = l.clamp(d.offset)
	return d, nil
}

// width is the box's inner width.
func (d confirm) width() int {
	if len(d.list) > 0 {
		return min(76, max(30, d.c.width-8))
	}
	return min(64, max(30, d.c.width-8))
}

// innerHeight is how many lines fit inside the box's border: the body, less the border.
func (d confirm) innerHeight() int {
	h := d.c.bodyH
	if h <= 0 {
		h = d.c.height - 6
	}
	return max(1, h-2)
}

// confirmLayout is the box fitted to the body. Lines carry a tag byte first: Q the question
// and [y/N], T a destination, N a note, L the list's title, R a list line, ' ' a blank.
type confirmLayout struct {
	top    []string // always shown: the question, its destinations, [y/N]
	mid    []string // scrolls: the notes, then the list
	midH   int      // lines of mid shown
	listAt int      // index in mid of the list's title, -1 without a list
	sep    bool     // a line above the keys: blank, or the scroll position
}

// scrolls reports whether the middle part is taller than its window.
func (l confirmLayout) scrolls() bool { return len(l.mid) > l.midH }

// clamp keeps a scroll offset inside the middle part.
func (l confirmLayout) clamp(off int) int { return max(0, min(off, len(l.mid)-l.midH)) }

// yn is the answers the question ends with, as bound: "[y/N]" (no is the default).
func (d confirm) yn() string {
	y, n := firstKey(d.c.keys.ConfirmYes), d.c.keys.ConfirmNo.Help().Key
	if !d.c.keys.ConfirmNo.Enabled() {
		n = firstKey(d.c.keys.Back)
	}
	return "[" + y + "/" + n + "]"
}

// questionLines is the question wrapped, with [y/N] at its end when it has no destinations.
func (d confirm) questionLines(w int) []string {
	text := d.question
	if d.live != nil {
		text = d.live()
	}
	q := cellLine(text)
	if d.yes != nil && len(d.dests) == 0 {
		q += " " + d.yn()
	}
	var out []string
	for _, l := range wrapText(q, w) {
		out = append(out, "Q"+l)
	}
	return out
}

// destLines lists the first n destinations, then how many more there are. A URL is broken
// where the line ends rather than moved whole to a line of its own.
func (d confirm) destLines(n, w int) []string {
	var out []string
	for _, dst := range d.dests[:n] {
		text := strings.TrimRight(ansi.Hardwrap(model.SanitizeLine("to "+strings.TrimSpace(dst)), max(10, w-5), false), "\n")
		for i, l := range strings.Split(text, "\n") {
			pad := "  "
			if i > 0 {
				pad = "     " // under the URL, past "to "
			}
			out = append(out, "T"+pad+l)
		}
	}
	if more := len(d.dests) - n; more > 0 {
		where := ""
		if d.listToggle && len(d.list) > 0 {
			where = " (d shows the dry run)"
			if d.showList {
				where = " (see the dry run)"
			}
		}
		s := fmt.Sprintf("  … and %d more%s", more, where)
		if n == 0 {
			s = fmt.Sprintf("  to %d %s%s", more, words.Plural(more, "destination", "destinations"), where)
		}
		out = append(out, "T"+truncate(s, w))
	}
	return out
}

// middleLines is the scrolling part: the notes, then the list with its title.
func (d confirm) middleLines(w int) ([]string, int) {
	var out []string
	for _, n := range d.notes {
		for _, l := range wrapText(cellLine(n), w) {
			out = append(out, "N"+l)
		}
	}
	listAt := -1
	if d.showList && len(d.list) > 0 {
		out = append(out, " ")
		listAt = len(out)
		out = append(out, "L"+d.listTitle)
		for _, l := range d.wrappedList() {
			out = append(out, "R"+l)
		}
	}
	return out, listAt
}

// layout fits the box into the body.
func (d confirm) layout() confirmLayout {
	w := d.width()
	h := d.innerHeight()
	q := d.questionLines(w)
	var yn []string
	if d.yes != nil && len(d.dests) > 0 {
		yn = []string{"Q" + d.yn()}
	}
	mid, listAt := d.middleLines(w)
	l := confirmLayout{mid: mid, listAt: listAt, sep: true}

	shown := len(d.dests)
	if shown > destsShown+1 {
		shown = destsShown
	}
	dests := d.destLines(shown, w)
	keep := min(len(mid), max(minMiddle, h/2))
	for shown > 0 && len(q)+len(dests)+len(yn)+len(mid)+2 > h && len(q)+len(dests)+len(yn)+keep+2 > h {
		shown--
		dests = d.destLines(shown, w)
	}
	if len(q)+len(dests)+len(yn)+keep+2 > h {
		l.sep = false // the blank line above the keys goes before the question does
		if len(q)+len(yn)+keep+1 > h {
			dests = nil
		}
	}
	if room := h - 1 - len(yn) - len(dests); len(q) > room {
		// Not even the question fits: cut it, keeping its [y/N] (on its last line, if the
		// [y/N] line doesn't fit either).
		inline := d.yes != nil && len(d.dests) == 0
		if room < 1 && len(yn) > 0 {
			yn, inline, room = nil, true, h-1-len(dests)
		}
		room = max(1, room)
		last := strings.TrimSuffix(q[min(room, len(q))-1][1:], " "+d.yn())
		if len(q) > room {
			q = q[:room]
			last = truncate(last+" …", w)
		}
		if inline {
			last = truncate(last, w-1-ansi.StringWidth(d.yn())) + " " + d.yn()
		}
		q[len(q)-1] = "Q" + last
	}
	l.top = append(append(q, dests...), yn...)
	bottom := 1
	if l.sep {
		bottom = 2
	}
	l.midH = max(0, min(len(mid), h-len(l.top)-bottom))
	if !l.sep && l.scrolls() && l.midH > 1 {
		// A cut list must say it goes on: the position line takes one of its lines.
		l.sep = true
		l.midH--
	}
	return l
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
	l := d.layout()
	var b strings.Builder
	line := func(s string) {
		switch s[0] {
		case 'Q':
			b.WriteString(st.paint(st.DialogDanger, s[1:]))
		case 'T':
			b.WriteString(s[1:])
		case 'N':
			b.WriteString(st.paint(st.Muted, s[1:]))
		case 'L':
			b.WriteString(st.paint(st.DialogTitle, truncate(s[1:], w)))
		case 'R':
			b.WriteString(fit(s[1:], w))
		}
		b.WriteByte('\n')
	}
	for _, s := range l.top {
		line(s)
	}
	off := l.clamp(d.offset)
	for _, s := range l.mid[off : off+l.midH] {
		line(s)
	}
	if l.sep {
		if l.scrolls() {
			// Where the window is; padded to the full width so the box doesn't change size
			// as it scrolls.
			pos := fmt.Sprintf("lines %d-%d of %d", off+1, off+l.midH, len(l.mid))
			if sh := d.c.keys.scrollHint(); sh != "" {
				pos += " (" + sh + " scroll)"
			}
			b.WriteString(st.paint(st.Muted, fit(pos, w)))
		}
		b.WriteByte('\n')
	}
	var keys []string
	km := d.c.keys
	say := func(k, what string) {
		if k != "" {
			keys = append(keys, st.paint(st.Bold, k)+" "+what)
		}
	}
	if d.yes != nil {
		say(firstKey(km.ConfirmYes), d.yesLabel)
	}
	if d.listToggle && len(d.list) > 0 {
		if d.showList {
			say(firstKey(km.ConfirmList), "hide dry run")
		} else {
			say(firstKey(km.ConfirmList), "dry run")
		}
	}
	if d.yes != nil {
		say(km.noKeys())
	} else {
		say(firstKey(km.Back), "close")
	}
	kl := strings.Join(keys, " · ")
	if ansi.StringWidth(kl) > w {
		kl = fitStyled(kl, w)
	}
	b.WriteString(kl)
	return st.DialogBox.Render(b.String())
}

// writeOp is the write a yes sends, if the dialog confirms one.
func (d confirm) writeOp() writeOp {
	if a, ok := d.yes.(confirmAction); ok {
		return a.op
	}
	return writeOp{}
}
