package model

import (
	"testing"
	"time"
)

// Each stamp is its own, later than the one before, even on a fixed or stepped-back clock,
// and reads back as the time it says.
func TestStamperGivesEachWriteItsOwnStamp(t *testing.T) {
	var s Stamper
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	got := []string{s.Stamp(at), s.Stamp(at), s.Stamp(at.Add(-time.Hour)), s.Stamp(at.Add(time.Second))}
	want := []string{"2026-03-01T12:00:00Z", "2026-03-01T12:00:00.001Z", "2026-03-01T12:00:00.002Z", "2026-03-01T12:00:01Z"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stamp %d = %s, want %s", i, got[i], want[i])
		}
	}
	if p, ok := ParseTime(got[1], time.UTC); !ok || !p.Equal(at.Add(time.Millisecond)) {
		t.Errorf("ParseTime(%s) = %v %v", got[1], p, ok)
	}
}
