package replay

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
)

// Text that came from a destination (a Location header, a response body, a transport error
// quoting what it sent) is capped before it is stored or shown (invariant 8). A cell holds
// 50,000 characters and the write-back of a run is one batch: one long answer must never
// cost other rows their outcome, nor flood a terminal.
const (
	// MaxDetail bounds Result.Detail and every Attempt.Err, in characters, marker included:
	// what a run writes to an error cell and prints.
	MaxDetail = 2000
	// maxQuotedAnswer bounds one piece of destination text quoted inside a message (a
	// Location), so the advice after it survives the MaxDetail cap.
	maxQuotedAnswer = 500
)

// truncated is the visible marker of capped text.
func truncated(n int) string { return fmt.Sprintf("…(truncated, %d chars)", n) }

// capText shortens s to at most max characters, the marker included, saying how long it
// was. Text within the bound is returned as it is.
func capText(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	mark := truncated(n)
	keep := max - utf8.RuneCountInString(mark)
	if keep < 0 {
		keep = 0
	}
	r := []rune(s)
	return string(r[:keep]) + mark
}

// destText prepares destination text for a message: one line, whitespace collapsed, control
// characters and bidi overrides made visible (the one sanitiser, invariant 9), capped.
func destText(s string, max int) string {
	s = model.SanitizeLine(strings.Join(strings.Fields(s), " "))
	return capText(s, max)
}

// capResult applies MaxDetail to a Result's texts.
func capResult(r Result) Result {
	r.Detail = capText(r.Detail, MaxDetail)
	if len(r.Attempts) > 0 {
		as := make([]Attempt, len(r.Attempts))
		copy(as, r.Attempts)
		for i := range as {
			as[i].Err = capText(as[i].Err, MaxDetail)
		}
		r.Attempts = as
	}
	return r
}
