package model

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes cell text safe to put on a terminal (invariant 9): ESC, every other C0 and
// C1 control, DEL, bidi overrides/isolates and invalid UTF-8 become visible placeholders, so
// a message body can't move the cursor, set the title, write the clipboard or forge a link.
// Newlines are kept (for the detail view); tabs become a space.
func Sanitize(s string) string { return sanitize(s, keepNewlines) }

// SanitizeLine is Sanitize for one-line places (table cells, the footer): newlines become ⏎.
func SanitizeLine(s string) string { return sanitize(s, 0) }

// SanitizeText is Sanitize for text whose layout belongs to it: newlines and tabs are kept,
// everything else is replaced as Sanitize does. It is what `y` copies (a pasted payload keeps
// its lines and indentation, but can't end a bracketed paste or carry an escape into the
// terminal it is pasted in) and what the CLI's output streams let through.
func SanitizeText(s string) string { return sanitize(s, keepNewlines|keepTabs) }

// Unsafe reports whether the sanitiser replaces r wherever it appears (newline and tab, which
// depend on the place, aside). JSON output escapes exactly these, so a JSON parser sees the
// original text while a terminal showing the document sees none of them.
func Unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case isBidiControl(r), isInvisibleBreak(r):
		return true
	}
	return false
}

type sanitizeMode int

const (
	keepNewlines sanitizeMode = 1 << iota
	keepTabs
)

func sanitize(s string, mode sanitizeMode) string {
	if isPlain(s, mode) {
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
			if mode&keepNewlines != 0 {
				b.WriteByte('\n')
			} else {
				b.WriteString("⏎ ")
			}
		case r == '\r':
			// dropped: CRLF bodies would otherwise show a placeholder on every line, and a
			// lone CR can't return to the start of the line to write over what was shown
		case r == '\t':
			if mode&keepTabs != 0 {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
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
		case isInvisibleBreak(r):
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

// isInvisibleBreak is a zero-width space, a Unicode line or paragraph separator or a BOM:
// text that hides where it is or breaks a line where nothing shows.
func isInvisibleBreak(r rune) bool {
	return r == 0x200b || r == 0x2028 || r == 0x2029 || r == 0xfeff
}

// isPlain is the fast path: printable ASCII only (plus what mode keeps).
func isPlain(s string, mode sanitizeMode) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			continue
		}
		if c == '\n' && mode&keepNewlines != 0 || c == '\t' && mode&keepTabs != 0 {
			continue
		}
		return false
	}
	return true
}
