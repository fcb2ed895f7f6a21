package cli

import (
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// listTimeLayout is how `list` shows a row's time: in the sheet's zone, which it names.
const listTimeLayout = "2006-01-02 15:04 MST"

// article is "a" or "an" for a word read aloud ("an inbox tab", "a queue tab").
func article(word string) string {
	if word != "" && (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' || word[0] == 'o' || word[0] == 'u') {
		return "an"
	}
	return "a"
}

// Width and cutting for the terminal, measured as the TUI measures (tui/text.go): in
// terminal cells, by grapheme cluster (a letter and its combining marks, an emoji with its
// modifiers and joiners are one), with github.com/charmbracelet/x/ansi. They expect text
// already through model.SanitizeLine: no control character is left to count.

// cellWidth is the width of s in terminal cells.
func cellWidth(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// cutCell cuts s to at most w cells, the last of them "…" when it had to cut, never inside
// a grapheme cluster. It reads s only as far as the cut (cellPrefix), so a cell of 50,000
// characters costs what its first screenful does.
func cutCell(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if printableASCII(s) {
		if len(s) <= w {
			return s
		}
		return s[:w-1] + "…"
	}
	prefix, whole := cellPrefix(s, w)
	if whole || ansi.StringWidth(prefix) > w {
		return ansi.Truncate(prefix, w, "…")
	}
	// (the prefix measured narrower by ansi than by clusters: cut it and say so all the same)
	return ansi.Truncate(prefix, w-1, "") + "…"
}

// cellPrefix is the start of s, whole clusters, a few cells wider than w (whole: all of s
// when it is no wider than that): what cutting s to w cells, or measuring it up to w, needs.
func cellPrefix(s string, w int) (prefix string, whole bool) {
	width := 0
	for i := 0; i < len(s); {
		c := s[i]
		var n, cw int
		if c >= 0x20 && c < 0x7f && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) {
			n, cw = 1, 1 // ASCII not followed by a combining mark or joiner
		} else {
			var cluster string
			cluster, cw = ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
			n = len(cluster)
		}
		if width > w+4 {
			return s[:i], false
		}
		width += cw
		i += n
	}
	return s, true
}

// boundedWidth is cellWidth(s), or some number over max when s is wider than max, read only
// that far.
func boundedWidth(s string, max int) int {
	if printableASCII(s) {
		return len(s)
	}
	prefix, _ := cellPrefix(s, max)
	return ansi.StringWidth(prefix)
}
