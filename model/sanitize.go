package model

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes cell text safe to put on a terminal (invariant 9): ESC, every other C0 and
// C1 control, DEL, bidi overrides/isolates and invalid UTF-8 become visible placeholders, so
// a message body can't move the cursor, set the title, write the clipboard or forge a link.
// Newlines are kept (for the detail view); tabs become a space.
func Sanitize(s string) string { return sanitize(s, true) }

// SanitizeLine is Sanitize for one-line places (table cells, the footer): newlines become ⏎.
func SanitizeLine(s string) string { return sanitize(s, false) }

func sanitize(s string, keepNewlines bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune('\uFFFD')
		case r == '\n':
			if keepNewlines {
				b.WriteByte('\n')
			} else {
				b.WriteString("⏎ ")
			}
		case r == '\r':
			// dropped: CRLF bodies would otherwise show a placeholder on every line
		case r == '\t':
			b.WriteByte(' ')
		case r == 0x1b:
			b.WriteRune('␛')
		case r < 0x20:
			b.WriteRune(0x2400 + r) // control pictures: ␀ ␁ ...
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r <= 0x9f:
			b.WriteRune('⍰')
		case isBidiControl(r):
			b.WriteRune('⇄')
		case r == 0x200b || r == 0x2028 || r == 0x2029 || r == 0xfeff:
			b.WriteRune('⍽')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// isPlain is the fast path: printable ASCII only.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
