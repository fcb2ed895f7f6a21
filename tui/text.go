package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// Width and truncation live here, in one place, so every part of the layout measures text the
// same way (grapheme clusters, as lipgloss does). All of them expect text that has already
// been through model.Sanitize/SanitizeLine: width is only meaningful after sanitising.

// textWidth is the display width of s in cells.
func textWidth(s string) int {
	if isPrintableASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// truncate cuts s to at most w cells, ending in … when something was cut.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if isPrintableASCII(s) {
		if len(s) <= w {
			return s
		}
		return s[:w-1] + "…"
	}
	return ansi.Truncate(s, w, "…")
}

// fit truncates s to w cells and pads it with spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = truncate(s, w)
	if pad := w - textWidth(s); pad > 0 {
		return s + strings.Repeat(" ", pad)
	}
	return s
}

// fitRight is fit with the text aligned right (numbers, ages).
func fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = truncate(s, w)
	if pad := w - textWidth(s); pad > 0 {
		return strings.Repeat(" ", pad) + s
	}
	return s
}

// isPrintableASCII is the fast path: one byte is one cell.
func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// cellLine is a sheet cell made fit for one line of the table: sanitised, newlines shown as ⏎.
func cellLine(s string) string { return model.SanitizeLine(strings.TrimSpace(s)) }

// firstLine is the first non-blank line of a cell, sanitised: the table shows a message by
// its opening line, the preview and detail show all of it.
func firstLine(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return model.SanitizeLine(strings.TrimSpace(s))
}

// wrapText wraps sanitised multi-line text to w cells and returns its lines. Long words
// (URLs, base64) are broken rather than overflowing.
func wrapText(s string, w int) []string {
	if w < 1 {
		w = 1
	}
	s = strings.TrimRight(s, "\n ")
	if s == "" {
		return nil
	}
	// A word longer than the line (a URL, a path, a key) breaks after a / or - when it can,
	// rather than at any character.
	wrapped := ansi.Wrap(s, w, "/-")
	lines := strings.Split(wrapped, "\n")
	for i, l := range lines {
		// Wrap can leave a trailing space at a break; it would only cost bytes on the wire.
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// clip returns at most max bytes of s, cut on a rune boundary. The preview only ever shows a
// screenful, so there is no point wrapping the rest of a 50,000-character cell per keypress.
func clip(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max], true
}

// age renders how long ago t was, in at most 6 cells: 45s, 12m, 3h, 6d, Jan 02, 2023.
func age(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		// Clock skew between the sheet and this machine: a future timestamp is "now" to a reader.
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	case t.Year() == now.Year():
		return t.Format("Jan 02")
	}
	return t.Format("2006")
}

// inZone is t in the spreadsheet's zone (loc), so every time on screen reads in one zone
// whoever wrote it; t as it is when the table has no zone.
func inZone(t time.Time, loc *time.Location) time.Time {
	if loc == nil || t.IsZero() {
		return t
	}
	return t.In(loc)
}

// ago is the long form used in the header and detail view ("12s ago", "on Jan 02").
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "just now"
	case d < 60*24*time.Hour:
		return age(now, t) + " ago"
	}
	return "on " + age(now, t)
}

// padLines makes a block exactly h lines of exactly w cells, so panes placed side by side
// or stacked never shift each other.
func padLines(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := 0; i < h; i++ {
		if i < len(lines) {
			out[i] = fitStyled(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return out
}

// fitStyled is fit for text that may carry SGR styling.
func fitStyled(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}
