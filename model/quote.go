package model

import (
	"strings"
	"unicode/utf8"
)

// QuoteLines is a message quoted for a reply, as the mailto: link and the mail draft both
// quote it: sanitised (a control character or a bidi override becomes a visible placeholder),
// each line after "> " (an empty one as ">"), at most limit characters of it (0: all), then
// "> […]", with shortened true, when there was more.
func QuoteLines(msg string, limit int) (lines []string, shortened bool) {
	s := strings.TrimSpace(Sanitize(strings.ReplaceAll(msg, "\r\n", "\n")))
	if limit > 0 && utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit])
		shortened = true
	}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, " ")
		if l == "" {
			lines = append(lines, ">")
			continue
		}
		lines = append(lines, "> "+l)
	}
	if shortened {
		lines = append(lines, "> […]")
	}
	return lines, shortened
}
