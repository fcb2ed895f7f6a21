package model

import (
	"sync"
	"time"
)

// stampLayout is RFC 3339 in UTC with milliseconds, trailing zeros dropped (so a whole
// second reads as FormatTime writes it); ParseTime reads it back.
const stampLayout = "2006-01-02T15:04:05.999Z07:00"

// Stamper gives each write of a store its own triaged_at: the clock to the millisecond,
// moved on by a millisecond past the previous stamp when it would not be later (two writes in
// one millisecond, a clock that stepped back, a fixed test clock), so a person reading the
// column can tell two writes apart. Both stores keep one; it is safe for concurrent use.
type Stamper struct {
	mu   sync.Mutex
	last time.Time
}

// Stamp is the next stamp at now.
func (s *Stamper) Stamp(now time.Time) string {
	t := now.UTC().Truncate(time.Millisecond)
	s.mu.Lock()
	if !t.After(s.last) {
		t = s.last.Add(time.Millisecond)
	}
	s.last = t
	s.mu.Unlock()
	return t.Format(stampLayout)
}
