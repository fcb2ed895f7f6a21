package emulator

import (
	"testing"
	"time"
)

// until polls cond until it holds (true) or the test is over (false): its context is done,
// or its -timeout is near (it gives up with a tenth of what was left, at most 5s, so that the
// caller's failure is reported rather than the binary's panic). No wall-clock limit of its
// own decides it. The emulator's own tests cannot import internal/testbed, which imports the
// emulator: this is testbed.Until for them.
func until(t testing.TB, cond func() bool) bool {
	var near <-chan time.Time
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			left := time.Until(deadline)
			timer := time.NewTimer(left - min(left/10, 5*time.Second))
			defer timer.Stop()
			near = timer.C
		}
	}
	// The cadence of the polls, not a limit: only the test's end stops them.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-t.Context().Done():
			return false
		case <-near:
			return cond()
		case <-tick.C:
		}
	}
	return true
}

func TestUntil(t *testing.T) {
	n := 0
	if !until(t, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("until stopped after %d checks, want 3", n)
	}
	t.Run("over", func(t *testing.T) {
		// In a cleanup, the test's context is done: until no longer waits.
		t.Cleanup(func() {
			if until(t, func() bool { return false }) {
				t.Error("until reported a condition that never held")
			}
		})
	})
}
