package model

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxCellChars is the most characters a Google Sheets cell holds. A value past it is refused
// by the API (the whole request fails), so a writer checks it first.
const MaxCellChars = 50000

// DeadLetter is one failed call as a producer hands it to a dead-letter sink (DESIGN §10):
// what a `failed_calls` row holds, so that a later `triage replay` sends the same call with
// the same key. A sink writes it with status `dead` (waiting for replay); what happens next
// is a person's or a replay's decision.
type DeadLetter struct {
	// Timestamp is when the call ended (written as RFC 3339, UTC).
	Timestamp time.Time
	// Source names the configured source the call belongs to.
	Source string
	// URL is the destination.
	URL string
	// Method is the HTTP method ("" is POST, as the tab reads it).
	Method string
	// Payload is the body exactly as it was sent (a body key field included where the source
	// inserted it), so a replay sends the same bytes (invariant 4).
	Payload string
	// Error says what became of the call: the last answer and what to check.
	Error string
	// Attempts is how many requests were sent (0: none, the call was never sent).
	Attempts int
	// Key is exactly the idempotency key that was sent (invariant 3); "" only for a call that
	// was never sent and had none, whose key a replay then mints and saves before sending.
	Key string
}

// CheckDeadLetter says why d can't be stored as a row, or nil: a field longer than a cell
// holds, or a payload that is not UTF-8 text. Neither may be shortened or repaired: a
// changed payload would be a different call under the same key (invariants 3 and 4), so
// such a letter must be kept elsewhere by its producer.
func CheckDeadLetter(d DeadLetter) error {
	if !utf8.ValidString(d.Payload) {
		return fmt.Errorf("dead letter %s: the payload is not UTF-8 text, so a sheet cell can't hold it byte for byte; keep this call elsewhere", letterName(d))
	}
	for _, f := range []struct{ name, v string }{{"payload", d.Payload}, {"url", d.URL}, {"key", d.Key}, {"error", d.Error}, {"source", d.Source}, {"method", d.Method}} {
		if n := utf8.RuneCountInString(f.v); n > MaxCellChars {
			return fmt.Errorf("dead letter %s: its %s has %d characters, more than a sheet cell holds (%d); it can't be shortened without changing the call, so keep it elsewhere", letterName(d), f.name, n, MaxCellChars)
		}
	}
	return nil
}

// letterName names a dead letter in a message by its key (capped and sanitised: it may be
// anything a caller passed), else by its source and URL.
func letterName(d DeadLetter) string {
	if d.Key != "" {
		return fmt.Sprintf("with key %s", quoteCapped(d.Key))
	}
	return fmt.Sprintf("without a key (source %s, url %s)", quoteCapped(d.Source), quoteCapped(d.URL))
}

// CheckDeadLetters checks a batch the way a sink records it, all or nothing: every letter's
// reason (CheckDeadLetter) in one error, or nil. Both stores refuse a batch with one bad
// letter whole, so the producer never has half a batch recorded.
func CheckDeadLetters(letters []DeadLetter) error {
	var bad []string
	for _, l := range letters {
		if err := CheckDeadLetter(l); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}
