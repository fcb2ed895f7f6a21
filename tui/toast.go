package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// How long toasts stay. Errors (conflicts, failed writes) stay longer: they are what the user
// must not miss, and they are longer to read.
// An info toast longer than a line stays longer, toastReadRate characters a second, so a
// toast that wraps can be read to its end before it goes.
const (
	toastInfoFor  = 4 * time.Second
	toastErrorFor = 15 * time.Second
	toastReadRate = 15
	// toastMaxLines is how many footer lines a toast may take (fewer on a short terminal,
	// toastLines); one longer than that is cut after its last whole word, with "…".
	toastMaxLines = 4
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
	// holds, when set, says whether what the toast says is still so ("25 marked"): the toast
	// goes as soon as it isn't (prune), rather than telling of a state the screen has left.
	holds func() bool
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

// sayf pushes a toast of level, its text formatted as fmt.Sprintf does.
func (t *toasts) sayf(level toastLevel, format string, args ...any) tea.Cmd {
	return t.push(level, fmt.Sprintf(format, args...))
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
	if read := time.Duration(utf8.RuneCountInString(text)) * time.Second / toastReadRate; read > d {
		d = min(read, toastErrorFor)
	}
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

// pushWhile is push for a toast that tells of a state: it goes when holds stops being true
// (checked after every message, prune), or when its time is up.
func (t *toasts) pushWhile(level toastLevel, text string, holds func() bool) tea.Cmd {
	cmd := t.push(level, text)
	t.items[len(t.items)-1].holds = holds
	return cmd
}

// prune drops the toasts whose state no longer holds; it reports whether one went.
func (t *toasts) prune() bool {
	kept := t.items[:0]
	for _, it := range t.items {
		if it.holds == nil || it.holds() {
			kept = append(kept, it)
		}
	}
	changed := len(kept) != len(t.items)
	t.items = kept
	return changed
}

// dismissInfo drops every info toast: they told of the view that was on screen (switching
// tabs leaves it). Errors stay until esc or their time is up: they must not be missed.
func (t *toasts) dismissInfo() {
	kept := t.items[:0]
	for _, it := range t.items {
		if it.level == toastError {
			kept = append(kept, it)
		}
	}
	t.items = kept
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

// toastLines is how many footer lines a toast may take on a terminal h lines high: up to
// toastMaxLines, fewer when the screen is short, so the table keeps some rows.
func toastLines(h int) int { return max(1, min(toastMaxLines, (h-minHeight)/2+3)) }

// lines renders the current toast for a footer of w x h: wrapped whole, word by word, in at
// most toastLines(h) lines; a longer one ends with its last whole word that fits and "…",
// never a word cut in two.
func (t *toasts) lines(c *common, w, h int) []string {
	cur, ok := t.current()
	if !ok {
		return nil
	}
	st := c.styles
	prefix, style := " ", st.ToastInfo
	if cur.level == toastError {
		prefix, style = " ✗ ", st.ToastError
		if st.NoColor {
			prefix = " ERROR: "
		}
	}
	indent := strings.Repeat(" ", textWidth(prefix))
	room := max(1, w-textWidth(prefix)-1)
	wrapped := wrapText(cur.text, room)
	if n := toastLines(h); len(wrapped) > n {
		wrapped = wrapped[:n]
		wrapped[n-1] = cutWords(wrapped[n-1], room)
	}
	out := make([]string, len(wrapped))
	for i, l := range wrapped {
		if i == 0 {
			l = prefix + l
		} else {
			l = indent + l
		}
		out[i] = st.paint(style, fit(l, w))
	}
	return out
}

// cutWords ends line with " …" in at most w cells, dropping its last words (whole) until it
// fits.
func cutWords(line string, w int) string {
	for textWidth(line)+2 > w {
		i := strings.LastIndexByte(strings.TrimRight(line, " "), ' ')
		if i <= 0 {
			return truncate(line, w) // one word longer than the line: wrapText broke it already
		}
		line = strings.TrimRight(line[:i], " ")
	}
	return line + " …"
}

// noticeMsg is a line from Options.Notices.
type noticeMsg string

// noticeCmd waits for the next notice, off the UI goroutine; Update re-arms it after each one,
// and a closed channel ends it.
func noticeCmd(ch <-chan string) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		n, ok := <-ch
		if !ok {
			return nil
		}
		return noticeMsg(model.SanitizeLine(n))
	}
}
