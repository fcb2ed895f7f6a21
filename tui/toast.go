package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// How long toasts stay. Errors (conflicts, failed writes) stay longer: they are what the user
// must not miss, and they are longer to read.
const (
	toastInfoFor  = 4 * time.Second
	toastErrorFor = 15 * time.Second
	// toastErrorLines is how many footer lines an error toast may take before it is cut.
	toastErrorLines = 3
)

type toastLevel int

const (
	toastInfo toastLevel = iota
	toastError
)

type toast struct {
	id    int
	level toastLevel
	text  string
}

// toastExpiredMsg removes one toast; the id makes a late tick harmless.
type toastExpiredMsg struct{ id int }

// toasts is the footer's transient messages.
type toasts struct {
	next  int
	items []toast
	// scale shortens every toast's time (tests watch a toast expire without waiting 15 s);
	// 0 or 1 is the real time.
	scale float64
}

// push adds a toast and returns the tick that removes it. The text is sanitised here because
// toasts quote sheet content (IDs, conflicting values, server errors).
func (t *toasts) push(level toastLevel, text string) tea.Cmd {
	t.next++
	id := t.next
	t.items = append(t.items, toast{id: id, level: level, text: model.SanitizeLine(text)})
	// Keep the list short: only the newest few could ever be shown.
	if len(t.items) > 8 {
		t.items = t.items[len(t.items)-8:]
	}
	d := toastInfoFor
	if level == toastError {
		d = toastErrorFor
	}
	if t.scale > 0 {
		d = time.Duration(float64(d) * t.scale)
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return toastExpiredMsg{id: id} })
}

func (t *toasts) expire(id int) {
	for i, it := range t.items {
		if it.id == id {
			t.items = append(t.items[:i], t.items[i+1:]...)
			return
		}
	}
}

// dismissErrors clears error toasts (esc): the user has read them.
func (t *toasts) dismissErrors() bool {
	kept := t.items[:0]
	for _, it := range t.items {
		if it.level != toastError {
			kept = append(kept, it)
		}
	}
	changed := len(kept) != len(t.items)
	t.items = kept
	return changed
}

// current is the toast to show: the newest error while one lasts (an info toast must not
// push a conflict report off screen), else the newest info.
func (t *toasts) current() (toast, bool) {
	for i := len(t.items) - 1; i >= 0; i-- {
		if t.items[i].level == toastError {
			return t.items[i], true
		}
	}
	if n := len(t.items); n > 0 {
		return t.items[n-1], true
	}
	return toast{}, false
}

// lines renders the current toast for a footer of width w: one line for info, up to
// toastErrorLines wrapped lines for an error.
func (t *toasts) lines(c *common, w int) []string {
	cur, ok := t.current()
	if !ok {
		return nil
	}
	st := c.styles
	if cur.level != toastError {
		return []string{st.paint(st.ToastInfo, fit(" "+cur.text, w))}
	}
	prefix := " ✗ "
	if st.NoColor {
		prefix = " ERROR: "
	}
	indent := strings.Repeat(" ", textWidth(prefix))
	wrapped := wrapText(cur.text, w-textWidth(prefix)-1)
	if len(wrapped) > toastErrorLines {
		wrapped = wrapped[:toastErrorLines]
		wrapped[toastErrorLines-1] = truncate(wrapped[toastErrorLines-1]+" …", w-textWidth(prefix)-1)
	}
	for i := range wrapped {
		if i == 0 {
			wrapped[i] = prefix + wrapped[i]
		} else {
			wrapped[i] = indent + wrapped[i]
		}
	}
	out := make([]string, len(wrapped))
	for i, l := range wrapped {
		out[i] = st.paint(st.ToastError, fit(l, w))
	}
	return out
}
